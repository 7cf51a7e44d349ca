import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { LaunchContext, WeightsRef } from "@air/core";
import type { PrimeRlConfig } from "./options.ts";
import { broadcastStepDir, primeRlPluginPaths, STABLE_FILE } from "./paths.ts";
import { lastPrimeStepUpTo } from "./steps.ts";

/**
 * `<prime-rl run dir>/resume-weights/step_N`: where a resumed run's first weights are set aside. A resumed prime-rl
 * trainer broadcasts its checkpoint step and the steps after it again, into `broadcasts/step_N` in place
 * (`save_file` truncates the file there); the inference server reads these, which no trainer writes.
 * @example resumeWeightsDir("/out/run/prime-rl", 4) // "/out/run/prime-rl/resume-weights/step_4"
 */
export function resumeWeightsDir(primeRunDir: string, step: number): string {
  return join(primeRunDir, "resume-weights", `step_${step}`);
}

/**
 * The weights a resumed run starts from: the broadcast the trainer finished for the last completed step (its
 * STABLE marker exists), moved (one rename, no copy) to `resumeWeightsDir` so the resumed trainer's rebroadcast
 * of that step cannot rewrite what the server is loading; older set-aside weights go. Called again (another node,
 * a second --resume) it finds them there. The prime-rl step comes from the plugin's persisted step map (empty air
 * steps take no prime-rl step); without one, air step s is prime-rl step s + 1, so the weights after `startStep`
 * air steps are those of prime-rl step `startStep`. Undefined when there are none. The plugin's
 * `launch.resumeWeights` hook.
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
  const broadcast = broadcastStepDir(runDir, step);
  if (!existsSync(join(kept, STABLE_FILE)) && existsSync(join(broadcast, STABLE_FILE))) {
    const parent = join(runDir, "resume-weights");
    mkdirSync(parent, { recursive: true });
    for (const name of readdirSync(parent))
      if (name !== `step_${step}`) rmSync(join(parent, name), { recursive: true, force: true });
    rmSync(kept, { recursive: true, force: true });
    try {
      renameSync(broadcast, kept);
    } catch (error) {
      // another node set them aside first
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  if (!existsSync(join(kept, STABLE_FILE))) return undefined;
  return { version: startStep, path: kept, kind: config.lora ? "lora" : "full" };
}
