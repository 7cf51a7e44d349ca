import { existsSync } from "node:fs";
import { join } from "node:path";
import type { LaunchContext, WeightsRef } from "@air/core";
import type { PrimeRlConfig } from "./options.ts";
import { broadcastStepDir, primeRlPluginPaths, STABLE_FILE } from "./paths.ts";
import { lastPrimeStepUpTo } from "./steps.ts";

/**
 * The weights a resumed run starts from: the broadcast the trainer finished for the last completed step, once its
 * STABLE marker exists. The prime-rl step comes from the plugin's persisted step map (empty air steps take no
 * prime-rl step); without one, air step s is prime-rl step s + 1, so the weights after `startStep` air steps are
 * `broadcasts/step_<startStep>`. Undefined when there is none. The plugin's `launch.resumeWeights` hook.
 * @example resumeWeights(config, ctx, 4) // { version: 4, path: ".../broadcasts/step_4", kind: "full" }
 */
export function resumeWeights(
  config: PrimeRlConfig,
  ctx: LaunchContext,
  startStep: number,
): WeightsRef | undefined {
  if (startStep <= 0) return undefined;
  const { runDir } = primeRlPluginPaths(config, ctx.runDir, ctx.configDir);
  const dir = broadcastStepDir(runDir, lastPrimeStepUpTo(runDir, startStep - 1));
  if (!existsSync(join(dir, STABLE_FILE))) return undefined;
  return { version: startStep, path: dir, kind: config.lora ? "lora" : "full" };
}
