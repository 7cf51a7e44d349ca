import { readFileSync } from "node:fs";
import { join } from "node:path";
import TOML from "@iarna/toml";
import type { PrimeRlVersion } from "./codecs/index.ts";

/** prime-rl config classes whose TOML keys are committed (`golden/fields/<version>/<class>.json`). */
export type PrimeRlConfigClass = "TrainerConfig" | "OrchestratorConfig" | "InferenceConfig";

const FIELDS = join(import.meta.dir, "..", "golden", "fields");

/**
 * The TOML keys (dotted; `name.*` for free-form tables) of a prime-rl config class at the version's pinned
 * commit, read from its source by `golden/config_fields.py`.
 * @example primeRlFields("0.9", "TrainerConfig").has("resume.step") // true
 */
export function primeRlFields(version: PrimeRlVersion, cls: PrimeRlConfigClass): Set<string> {
  return new Set(JSON.parse(readFileSync(join(FIELDS, version, `${cls}.json`), "utf8")) as string[]);
}

/**
 * Dotted keys of a TOML document (tables recursed; arrays and values are leaves).
 * @example tomlKeys({ model: { name: "m" } }) // ["model", "model.name"]
 */
export function tomlKeys(doc: Record<string, unknown>, prefix = ""): string[] {
  return Object.entries(doc).flatMap(([k, v]) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? [prefix + k, ...tomlKeys(v as Record<string, unknown>, `${prefix + k}.`)]
      : [prefix + k],
  );
}

/**
 * The keys of a TOML text that the prime-rl config class does not have (empty: prime-rl would accept the names).
 * @example unknownPrimeRlKeys("[optim]\nlrr = 1\n", "0.9", "TrainerConfig") // ["optim.lrr"]
 */
export function unknownPrimeRlKeys(text: string, version: PrimeRlVersion, cls: PrimeRlConfigClass): string[] {
  const known = primeRlFields(version, cls);
  return tomlKeys(TOML.parse(text)).filter((k) => {
    if (known.has(k)) return false;
    const parts = k.split(".");
    for (let i = parts.length - 1; i > 0; i--)
      if (known.has(`${parts.slice(0, i).join(".")}.*`)) return false;
    return true;
  });
}
