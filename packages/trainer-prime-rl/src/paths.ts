import { dirname, isAbsolute, join, resolve } from "node:path";
import type { PrimeRlConfig } from "./options.ts";

/** File names of prime-rl v0.8.0's filesystem transport and broadcast (`transport/filesystem.py`, `pathing.py`). */
export const BATCH_FILE = "train_rollouts.bin";
export const BATCH_TMP_FILE = "train_rollouts.bin.tmp";
export const STABLE_FILE = "STABLE";

/**
 * `<run_dir>/rollouts/step_<N>`: where the orchestrator writes the batch of prime-rl step N.
 * @example rolloutStepDir("/out/run_default", 1) // "/out/run_default/rollouts/step_1"
 */
export function rolloutStepDir(runDir: string, step: number): string {
  return join(runDir, "rollouts", `step_${step}`);
}

/**
 * `<run_dir>/broadcasts/step_<N>`: where the trainer writes the weights trained on batch N, then `STABLE`.
 * @example broadcastStepDir("/out/run_default", 1) // "/out/run_default/broadcasts/step_1"
 */
export function broadcastStepDir(runDir: string, step: number): string {
  return join(runDir, "broadcasts", `step_${step}`);
}

/**
 * The trainer's output dir and the orchestrator's run dir (where rollouts/ and broadcasts/ live) for a prime-rl
 * version: 0.8 nests the run in `<output_dir>/<run_*>`; 0.9 uses the output dir itself. `runDir` alone means
 * its parent (0.8) or itself (0.9) as the output dir; `defaultOutputDir` applies when neither is given.
 * @example primeRlDirs({ version: "0.8", defaultOutputDir: "/r/prime-rl", runName: "run_default" })
 * // { outputDir: "/r/prime-rl", runDir: "/r/prime-rl/run_default" }
 */
export function primeRlDirs(options: {
  version: "0.8" | "0.9";
  defaultOutputDir: string;
  outputDir?: string;
  runDir?: string;
  runName: string;
}): { outputDir: string; runDir: string } {
  const nested = options.version === "0.8";
  if (options.runDir !== undefined) {
    const outputDir = options.outputDir ?? (nested ? dirname(options.runDir) : options.runDir);
    return { outputDir, runDir: options.runDir };
  }
  const outputDir = options.outputDir ?? options.defaultOutputDir;
  return { outputDir, runDir: nested ? join(outputDir, options.runName) : outputDir };
}

/**
 * The run dir and metrics file the plugin uses for a config (relative paths from `configDir`).
 * @example primeRlPluginPaths(config, "/runs/r1", "/cfg") // { outputDir, runDir, metricsFile }
 */
export function primeRlPluginPaths(
  config: PrimeRlConfig,
  airRunDir: string,
  configDir: string,
): { outputDir: string; runDir: string; metricsFile: string } {
  const at = (p: string) => (isAbsolute(p) ? p : resolve(configDir, p));
  const dirs = primeRlDirs({
    version: config.prime_rl_version,
    defaultOutputDir: join(airRunDir, "prime-rl"),
    outputDir: config.output_dir ? at(config.output_dir) : undefined,
    runDir: config.run_dir ? at(config.run_dir) : undefined,
    runName: config.run_name,
  });
  return {
    ...dirs,
    metricsFile: config.metrics_file ? at(config.metrics_file) : join(dirs.outputDir, "metrics.jsonl"),
  };
}
