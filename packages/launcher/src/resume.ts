import type { LaunchContext, ResolvedPlugin, WeightsRef } from "@air/core";

/**
 * The weights a run resumed at `startStep` starts from, through the trainer plugin's `launch.resumeWeights` hook
 * (prime-rl: the broadcast finished for the last completed step). Undefined: the base weights.
 * `launch`: the plan's (`RunPlan.launch`).
 * @example resumeWeights(plan.config.plugins.trainer, plan.launch, 4) // { version: 4, path: ".../broadcasts/step_4", kind: "full" }
 */
export function resumeWeights(
  plugin: ResolvedPlugin<"trainer">,
  launch: LaunchContext,
  startStep: number,
): WeightsRef | undefined {
  if (startStep <= 0) return undefined;
  return plugin.definition.launch?.resumeWeights?.(plugin.config, launch, startStep);
}
