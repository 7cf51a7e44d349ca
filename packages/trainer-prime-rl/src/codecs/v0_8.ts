import { join } from "node:path";
import { encodeTrainingBatch } from "../wire.ts";
import type { PrimeRlCodec } from "./types.ts";

/**
 * prime-rl v0.8.0: one msgpack `TrainingBatch` per step in `<output_dir>/<run_*>/rollouts/step_N/train_rollouts.bin`
 * (the trainer packs it), a multi-run manager that needs `control/orch.toml`, filesystem transport only here.
 * @example codecV08.encodeStep(samples, 1, { seqLen: 4096, dataWorldSize: 1 })[0].file // "train_rollouts.bin"
 */
export const codecV08: PrimeRlCodec = {
  version: "0.8",
  tag: "v0.8.0",
  commit: "60bc29547a8824ad1de7b9af8d265e2b27b2a72d",
  runDir: (outputDir, runName) => join(outputDir, runName),
  needsControlFile: true,
  transports: ["filesystem"],
  encodeStep: (samples, step) => [
    {
      file: "train_rollouts.bin",
      rank: 0,
      bytes: encodeTrainingBatch({ examples: samples, step, run_idx: null }),
    },
  ],
  // pathing.py clean_future_steps: <output_dir>/rollouts, run_default/rollouts, run_default/broadcasts.
  stepDirs: (outputDir, runDir) => [
    join(outputDir, "rollouts"),
    join(runDir, "rollouts"),
    join(runDir, "broadcasts"),
  ],
};
