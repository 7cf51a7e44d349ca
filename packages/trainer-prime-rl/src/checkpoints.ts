import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { STABLE_FILE } from "./paths.ts";

/**
 * `<output_dir>/checkpoints`: where prime-rl's trainer saves `step_N/trainer` (`utils/pathing.py` `get_ckpt_dir`,
 * `trainer/ckpt.py` `CheckpointManager.get_ckpt_path`).
 * @example checkpointDir("/out/run/prime-rl") // "/out/run/prime-rl/checkpoints"
 */
export function checkpointDir(outputDir: string): string {
  return join(outputDir, "checkpoints");
}

/** The N of every `step_N` under `dir`, ascending (prime-rl's `get_all_ckpt_steps`). */
export function stepNumbers(dir: string): number[] {
  if (!existsSync(dir)) return [];
  const steps: number[] = [];
  for (const name of readdirSync(dir)) {
    const m = /^step_(\d+)$/.exec(name);
    if (m) steps.push(Number(m[1]));
  }
  return steps.sort((a, b) => a - b);
}

/**
 * The steps with a trainer checkpoint prime-rl can load (`checkpoints/step_N/trainer`, which `load` requires),
 * ascending. Step 0 never has one (prime-rl's `[resume] step` is ge=1).
 * @example checkpointSteps("/out/run/prime-rl") // [3, 4]
 */
export function checkpointSteps(outputDir: string): number[] {
  const dir = checkpointDir(outputDir);
  return stepNumbers(dir).filter((s) => s >= 1 && existsSync(join(dir, `step_${s}`, "trainer")));
}

/**
 * The checkpoint a trainer (re)started to continue after prime-rl step `upTo` loads: the newest one at or before
 * it, or undefined (a fresh start from the base weights: prime-rl writes `broadcasts/step_0/STABLE` at startup,
 * which is no checkpoint, and rejects `resume.step = 0`). Between the checkpoint and `upTo` the trainer trains
 * again on the batches still on disk (`rollouts/step_*`, kept by `pruneStepDirs`).
 * @example resumeCheckpoint("/out/run/prime-rl", 5) // 4 (checkpoints 3 and 4 exist)
 */
export function resumeCheckpoint(outputDir: string, upTo: number): number | undefined {
  return checkpointSteps(outputDir)
    .filter((s) => s <= upTo)
    .pop();
}

/**
 * Bounds what a run keeps on disk once the weights of prime-rl step `newest` arrived: broadcasts older than the
 * newest `keepBroadcasts` ones with STABLE go (prime-rl's trainer removes `step - 2` itself, but keeps every one
 * on a checkpoint interval; a restarted or resumed trainer broadcasts its start weights again), and a batch
 * (`rollouts/step_N`) goes once a checkpoint at or after N exists — before that a trainer restarted from an older
 * checkpoint (or from the base weights) trains on it again. Checkpoints themselves are pruned by prime-rl's
 * `[ckpt] keep_last`. Returns the paths removed.
 * @example pruneStepDirs({ runDir: "/o", outputDir: "/o", newest: 9, keepBroadcasts: 2 }) // ["/o/broadcasts/step_7", ...]
 */
export function pruneStepDirs(options: {
  runDir: string;
  outputDir: string;
  newest: number;
  keepBroadcasts: number;
}): string[] {
  const removed: string[] = [];
  const broadcasts = join(options.runDir, "broadcasts");
  const stable = stepNumbers(broadcasts).filter(
    (s) => s <= options.newest && existsSync(join(broadcasts, `step_${s}`, STABLE_FILE)),
  );
  const keepFrom = stable[stable.length - options.keepBroadcasts] ?? 0;
  for (const s of stepNumbers(broadcasts))
    if (s < keepFrom) {
      rmSync(join(broadcasts, `step_${s}`), { recursive: true, force: true });
      removed.push(join(broadcasts, `step_${s}`));
    }
  const oldestCheckpoint = checkpointSteps(options.outputDir)[0];
  const rollouts = join(options.runDir, "rollouts");
  if (oldestCheckpoint !== undefined)
    for (const s of stepNumbers(rollouts))
      if (s <= oldestCheckpoint) {
        rmSync(join(rollouts, `step_${s}`), { recursive: true, force: true });
        removed.push(join(rollouts, `step_${s}`));
      }
  return removed;
}
