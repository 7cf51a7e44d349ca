import type { PreparedRunDir } from "@air/core";
import { launchContext } from "./launch-context.ts";
import type { RunConfig } from "./sections.ts";

/**
 * Before the launcher starts a trainer process, the trainer plugin's `launch.prepareRunDir` hook prepares the run
 * dir (prime-rl: what its `rl` does in `clean_future_steps`) and says the checkpoint step the process resumes from.
 * Nothing to do when the launcher starts no trainer process or the plugin has no such hook.
 * @example prepareTrainerRunDir(config, 4, true) // { trainerStep: 4, resumeStep: 4, removed: [".../rollouts/step_5"] }
 */
export function prepareTrainerRunDir(config: RunConfig, startStep: number, resume: boolean): PreparedRunDir {
  const tp = config.root.trainer_process;
  const { definition, config: trainerConfig } = config.plugins.trainer;
  const hook = definition.launch?.prepareRunDir;
  if (!hook || tp.kind === "none") return { removed: [] };
  return hook(trainerConfig, { ...launchContext(config), startStep, resume, nodeRank: tp.node_rank });
}
