import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { LaunchContext, WeightsRef } from "@air/core";
import { stepNumbers } from "./checkpoints.ts";
import type { PrimeRlConfig } from "./options.ts";
import { broadcastStepDir, primeRlPluginPaths, STABLE_FILE } from "./paths.ts";
import { lastPrimeStepUpTo } from "./steps.ts";

/**
 * `<prime-rl run dir>/resume-weights/step_N`: where finished broadcasts are set aside before a resumed or restarted
 * trainer starts. Such a trainer broadcasts its checkpoint step and the steps after it again, into
 * `broadcasts/step_N` in place (`save_file` truncates the file there, STABLE already present); the inference server
 * reads the set-aside ones, which no trainer writes.
 * @example resumeWeightsDir("/out/run/prime-rl", 4) // "/out/run/prime-rl/resume-weights/step_4"
 */
export function resumeWeightsDir(primeRunDir: string, step: number): string {
  return join(primeRunDir, "resume-weights", `step_${step}`);
}

/**
 * The finished weights of prime-rl step `step` the server may load: the set-aside copy when there is one (nothing
 * rewrites it), else the broadcast once it has STABLE; undefined when neither is finished.
 * @example finishedWeightsDir("/out/run/prime-rl", 4) // "/out/run/prime-rl/resume-weights/step_4"
 */
export function finishedWeightsDir(primeRunDir: string, step: number): string | undefined {
  return [resumeWeightsDir(primeRunDir, step), broadcastStepDir(primeRunDir, step)].find((d) =>
    existsSync(join(d, STABLE_FILE)),
  );
}

/** Moves one finished broadcast to `resumeWeightsDir` (one rename, no copy) unless a set-aside copy is there. */
function setAside(primeRunDir: string, step: number): string | undefined {
  const kept = resumeWeightsDir(primeRunDir, step);
  const broadcast = broadcastStepDir(primeRunDir, step);
  if (existsSync(join(kept, STABLE_FILE)) || !existsSync(join(broadcast, STABLE_FILE))) return undefined;
  mkdirSync(dirname(kept), { recursive: true });
  rmSync(kept, { recursive: true, force: true });
  try {
    renameSync(broadcast, kept);
  } catch (error) {
    // another node set them aside first
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return undefined;
  }
  return kept;
}

/**
 * Sets aside every finished broadcast at or after prime-rl step `from` — those a trainer restarted from checkpoint
 * `from` (0: from the base weights) broadcasts again in place while the server may be loading one — and returns
 * the dirs it moved. An open file keeps being read from the moved inode; the plugin hands the server the set-aside
 * dir of a step from then on (`finishedWeightsDir`). The plugin's `launch.beforeRestart` hook.
 * @example setAsideForRestart(config, ctx, 3) // [".../resume-weights/step_3", ".../resume-weights/step_4"]
 */
export function setAsideForRestart(
  config: PrimeRlConfig,
  ctx: LaunchContext,
  from: number | undefined,
): string[] {
  const { runDir } = primeRlPluginPaths(config, ctx.runDir, ctx.configDir);
  const moved: string[] = [];
  for (const step of stepNumbers(join(runDir, "broadcasts")))
    if (step >= (from ?? 0)) {
      const kept = setAside(runDir, step);
      if (kept) moved.push(kept);
    }
  return moved;
}

/**
 * Removes the set-aside weights of prime-rl steps before `step` (the server loaded `step`'s; the orchestrator loads
 * weights in order) and returns what it removed.
 * @example pruneSetAside("/out/run/prime-rl", 5) // ["/out/run/prime-rl/resume-weights/step_3"]
 */
export function pruneSetAside(primeRunDir: string, step: number): string[] {
  const root = dirname(resumeWeightsDir(primeRunDir, 0));
  const removed: string[] = [];
  for (const s of stepNumbers(root))
    if (s < step) {
      rmSync(join(root, `step_${s}`), { recursive: true, force: true });
      removed.push(join(root, `step_${s}`));
    }
  return removed;
}

/**
 * The weights a resumed run starts from: the broadcast the trainer finished for the last completed step (its
 * STABLE marker exists), moved (one rename, no copy) to `resumeWeightsDir` so the resumed trainer's rebroadcast
 * of that step cannot rewrite what the server is loading; other set-aside weights go (a restart's, past the resume
 * point, would otherwise count as finished steps). Called again (another node, a second --resume) it finds them
 * there. The prime-rl step comes from the plugin's persisted step map (empty air steps take no prime-rl step);
 * without one, air step s is prime-rl step s + 1, so the weights after `startStep` air steps are those of prime-rl
 * step `startStep`. Undefined when there are none. The plugin's `launch.resumeWeights` hook.
 * @example resumeWeights(config, ctx, 4) // { version: 4, path: ".../resume-weights/step_4", kind: "full" }
 */
export function resumeWeights(
  config: PrimeRlConfig,
  ctx: LaunchContext,
  startStep: number,
): WeightsRef | undefined {
  if (startStep <= 0) return undefined;
  const { runDir } = primeRlPluginPaths(config, ctx.runDir, ctx.configDir);
  const step = lastPrimeStepUpTo(runDir, startStep - 1);
  const kept = resumeWeightsDir(runDir, step);
  setAside(runDir, step);
  const parent = dirname(kept);
  if (existsSync(parent))
    for (const name of readdirSync(parent))
      if (name !== `step_${step}`) rmSync(join(parent, name), { recursive: true, force: true });
  if (!existsSync(join(kept, STABLE_FILE))) return undefined;
  return { version: startStep, path: kept, kind: config.lora ? "lora" : "full" };
}
