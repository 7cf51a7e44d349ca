import { join } from "node:path";
import { encodeMicroBatches } from "../micro-batch.ts";
import { packSamples } from "../pack.ts";
import type { PrimeRlCodec } from "./types.ts";

/**
 * prime-rl after the multi-tenant removal (#3189) and the move to `prime_rl.transports` (#3308), read at tag
 * v0.8.1.dev67 (main of 2026-08-21; the newest commit the mirror holds — v0.9.0 itself is not in it): the
 * orchestrator packs samples into `MicroBatch`es per data rank and sends `rollouts/step_N/rank_R.bin` or one
 * ZMQ frame per rank; the output dir is the run dir (no `run_*`), no control file.
 * @example codecV09.encodeStep(samples, 1, { seqLen: 4096, dataWorldSize: 2 }).map((p) => p.file) // ["rank_0.bin", "rank_1.bin"]
 */
export const codecV09: PrimeRlCodec = {
  version: "0.9",
  tag: "v0.8.1.dev67",
  commit: "559b44772e471d1538537b8805cc77f3824a5e64",
  runDir: (outputDir) => outputDir,
  needsControlFile: false,
  transports: ["filesystem", "zmq"],
  encodeStep: (samples, _step, pack) =>
    packSamples(samples, pack).map((batches, rank) => ({
      file: `rank_${rank}.bin`,
      rank,
      bytes: encodeMicroBatches(batches),
    })),
  // pathing.py clean_future_steps: <run_dir>/rollouts and <run_dir>/broadcasts.
  stepDirs: (_outputDir, runDir) => [join(runDir, "rollouts"), join(runDir, "broadcasts")],
};
