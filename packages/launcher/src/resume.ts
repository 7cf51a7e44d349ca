import type { WeightsRef } from "@air/core";
import { launchContext } from "./launch-context.ts";
import type { RunConfig } from "./sections.ts";

/**
 * The weights a run resumed at `startStep` starts from, through the trainer plugin's `launch.resumeWeights` hook
 * (prime-rl: the broadcast finished for the last completed step). Undefined: the base weights.
 * @example resumeWeights(config, 4) // { version: 4, path: ".../broadcasts/step_4", kind: "full" }
 */
export function resumeWeights(config: RunConfig, startStep: number): WeightsRef | undefined {
  if (startStep <= 0) return undefined;
  const { definition, config: trainerConfig } = config.plugins.trainer;
  return definition.launch?.resumeWeights?.(trainerConfig, launchContext(config), startStep);
}
