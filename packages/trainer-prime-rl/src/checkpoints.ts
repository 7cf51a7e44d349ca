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
 * The file whose presence makes `checkpoints/step_N/trainer` a complete checkpoint: torch.distributed.checkpoint's
 * FileSystemWriter writes every rank's payload (`__<rank>_<i>.distcp`) first and `.metadata` last (`finish`:
 * `.metadata.tmp`, then a rename), and its reader cannot load a directory without it. Later prime-rl names the
 * same marker (`CKPT_COMPLETE_MARKERS = {"trainer": ".metadata"}`, utils/pathing.py); prime-rl 559b447 counts
 * every `step_*` dir.
 */
export const CKPT_COMPLETE_MARKER = ".metadata";

/**
 * Whether `checkpoints/step_<step>/trainer` under `outputDir` is a complete checkpoint (its `.metadata` written).
 * A trainer killed mid-save (OOM, kill -9, preemption) leaves the payload without it.
 * @example checkpointComplete("/out/run/prime-rl", 4) // false while step 4 is being saved
 */
export function checkpointComplete(outputDir: string, step: number): boolean {
  return existsSync(join(checkpointDir(outputDir), `step_${step}`, "trainer", CKPT_COMPLETE_MARKER));
}

/**
 * The steps with a complete trainer checkpoint prime-rl can load (`checkpoints/step_N/trainer/.metadata`),
 * ascending. Step 0 never has one (prime-rl's `[resume] step` is ge=1); a save that did not finish is none.
 * @example checkpointSteps("/out/run/prime-rl") // [3, 4]
 */
export function checkpointSteps(outputDir: string): number[] {
  return stepNumbers(checkpointDir(outputDir)).filter((s) => s >= 1 && checkpointComplete(outputDir, s));
}

/**
 * The `step_N` dirs under `checkpoints/` whose save never finished (no `.metadata`), ascending.
 * @example incompleteCheckpointSteps("/out/run/prime-rl") // [5]
 */
export function incompleteCheckpointSteps(outputDir: string): number[] {
  return stepNumbers(checkpointDir(outputDir)).filter((s) => !checkpointComplete(outputDir, s));
}

/**
 * The checkpoint a trainer (re)started to continue after prime-rl step `upTo` loads: the newest complete one at or
 * before it (a half-written one, which prime-rl writes after STABLE, is passed over), or undefined (a fresh start from the base weights: prime-rl writes `broadcasts/step_0/STABLE` at startup,
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
