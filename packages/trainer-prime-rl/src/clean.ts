import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { codecFor, type PrimeRlVersion } from "./codecs/index.ts";
import { STEP_MAP_FILE } from "./steps.ts";

/**
 * prime-rl's `clean_future_steps`, as its `rl` entrypoint runs it before starting the trainer: removes the
 * `step_N` dirs with N > `resumeStep` under the version's rollouts/broadcasts dirs. On a fresh start
 * (`resumeStep` -1) it also removes what air would otherwise read back from the previous run: the trainer's
 * `metrics.jsonl`, `control/evicted.txt`, `control/config_validation_error.txt` and air's step map.
 * Returns the paths removed.
 * @example cleanFutureSteps({ version: "0.9", outputDir: "/o", runDir: "/o", resumeStep: 4 }) // ["/o/rollouts/step_5", ...]
 */
export function cleanFutureSteps(options: {
  version: PrimeRlVersion;
  outputDir: string;
  runDir: string;
  resumeStep: number;
  metricsFile?: string;
}): string[] {
  const removed: string[] = [];
  const remove = (path: string) => {
    if (!existsSync(path)) return;
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  };
  for (const dir of codecFor(options.version).stepDirs(options.outputDir, options.runDir)) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const m = /^step_(\d+)$/.exec(name);
      if (m && Number(m[1]) > options.resumeStep) remove(join(dir, name));
    }
  }
  if (options.resumeStep < 0) {
    remove(options.metricsFile ?? join(options.outputDir, "metrics.jsonl"));
    remove(join(options.runDir, "control", "evicted.txt"));
    remove(join(options.runDir, "control", "config_validation_error.txt"));
    remove(join(options.runDir, STEP_MAP_FILE));
  }
  return removed;
}
