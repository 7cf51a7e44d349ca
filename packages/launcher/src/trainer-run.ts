import type { LaunchContext, PreparedRunDir, ResolvedPlugin } from "@air/core";
import type { PlannedProcess } from "./process-kinds.ts";

/**
 * Before the launcher starts a trainer process, the trainer plugin's `launch.prepareRunDir` hook prepares the run
 * dir (prime-rl: what its `rl` does in `clean_future_steps`) and says the checkpoint step the process resumes from.
 * Nothing to do when the launcher starts no trainer process or the plugin has no such hook. Reads the run's plan:
 * its trainer process (`RunPlan.trainer`, whose node rank the hook gets) and `RunPlan.launch`.
 * @example prepareTrainerRunDir(plan.config.plugins.trainer, plan.trainer, { ...plan.launch, startStep: 4, resume: true }) // { trainerStep: 4, resumeStep: 4, removed: [".../rollouts/step_5"] }
 */
export function prepareTrainerRunDir(
  plugin: ResolvedPlugin<"trainer">,
  trainer: PlannedProcess | undefined,
  ctx: LaunchContext & { startStep: number; resume: boolean },
): PreparedRunDir {
  const hook = plugin.definition.launch?.prepareRunDir;
  if (!hook || !trainer) return { removed: [] };
  return hook(plugin.config, { ...ctx, nodeRank: trainer.ctx.trainerProcess.node_rank });
}
