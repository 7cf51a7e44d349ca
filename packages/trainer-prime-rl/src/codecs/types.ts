import type { PackOptions } from "../pack.ts";
import type { TrainingSampleWire } from "../wire.ts";

/** The prime-rl versions air can drive. */
export const PRIME_RL_VERSIONS = ["0.8", "0.9"] as const;
export type PrimeRlVersion = (typeof PRIME_RL_VERSIONS)[number];

/** One file (or, over ZMQ, one data frame) of a step's batch. */
export interface BatchPart {
  /** File name inside `rollouts/step_N/` (`train_rollouts.bin`, `rank_R.bin`). */
  file: string;
  /** The data rank it is for (0.8: the one file, rank 0). */
  rank: number;
  bytes: Uint8Array;
}

/**
 * What changes between prime-rl versions on the orchestrator ↔ trainer boundary. Each version is one module
 * (`codecs/v0_8.ts`, `codecs/v0_9.ts`); the next upstream change is one new file.
 */
export interface PrimeRlCodec {
  version: PrimeRlVersion;
  /** The upstream commit this codec was read from (and its golden bytes made with). */
  commit: string;
  /** The tag at that commit. */
  tag: string;
  /** The orchestrator's run dir for a trainer output dir: where rollouts/, broadcasts/ live. */
  runDir(outputDir: string, runName: string): string;
  /** Whether the trainer needs `<run_dir>/control/orch.toml` (0.8's multi-run manager). */
  needsControlFile: boolean;
  /** Transports this version's trainer can receive from. */
  transports: readonly ("filesystem" | "zmq")[];
  /** Encodes one step's samples into the files (or frames) the trainer reads. */
  encodeStep(samples: TrainingSampleWire[], step: number, pack: PackOptions): BatchPart[];
  /** Directories whose `step_*` children prime-rl's `clean_future_steps` removes. */
  stepDirs(outputDir: string, runDir: string): string[];
}
