import { cleanFutureSteps, lastPrimeStepUpTo } from "@air/trainer-prime-rl";
import type { RunConfig } from "./sections.ts";
import { primeRlPaths } from "./trainer-toml.ts";

/**
 * Before the launcher starts a trainer for the prime-rl transport, do what prime-rl's `rl` does
 * (`clean_future_steps`): a fresh start removes every old `rollouts/step_*` and `broadcasts/step_*` (else the
 * trainer's receiver, starting at step 1, would train on the previous run's batches and air would take stale
 * weights for fresh ones) plus the old metrics, `control/evicted.txt` and air's step map; a resume removes the
 * steps after the resume point. Returns the prime-rl step the trainer resumes from (the last one taken by an air
 * step before `startStep`), or undefined on a fresh start, and what was removed. Does nothing without a
 * prime-rl trainer plugin or when the launcher starts no trainer.
 * @example preparePrimeRlRunDir(config, 4, true) // { primeStep: 4, removed: [".../rollouts/step_5"] }
 */
export function preparePrimeRlRunDir(
  config: RunConfig,
  startStep: number,
  resume: boolean,
): { primeStep?: number; removed: string[] } {
  if (config.plugins.trainer.spec !== "prime-rl" || config.root.trainer_process.kind === "none")
    return { removed: [] };
  const paths = primeRlPaths(config);
  const last = resume && startStep > 0 ? lastPrimeStepUpTo(paths.runDir, startStep - 1) : 0;
  const primeStep = last > 0 ? last : undefined;
  const removed = cleanFutureSteps({
    version: paths.version,
    outputDir: paths.outputDir,
    runDir: paths.runDir,
    metricsFile: paths.metricsFile,
    resumeStep: primeStep ?? -1,
  });
  return { primeStep, removed };
}
