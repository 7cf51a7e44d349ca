import type { PrimeRlCodec, PrimeRlVersion } from "./types.ts";
import { codecV08 } from "./v0_8.ts";
import { codecV09 } from "./v0_9.ts";

export { type BatchPart, PRIME_RL_VERSIONS, type PrimeRlCodec, type PrimeRlVersion } from "./types.ts";

/** The newest prime-rl version air speaks (the default of `[trainer] prime_rl_version`). */
export const NEWEST_PRIME_RL: PrimeRlVersion = "0.9";

const CODECS: Record<PrimeRlVersion, PrimeRlCodec> = { "0.8": codecV08, "0.9": codecV09 };

/**
 * The codec of a prime-rl version.
 * @example codecFor("0.8").runDir("/out", "run_default") // "/out/run_default"
 */
export function codecFor(version: PrimeRlVersion): PrimeRlCodec {
  return CODECS[version];
}
