import type { FinalWeights, LaunchContext, ResolvedPlugin } from "@air/core";
import { readLastCompletedStep } from "./rundir.ts";

export type { FinalWeights } from "@air/core";

/**
 * Makes the run's trained model a deliverable once it ends, through the trainer plugin's `launch.finalWeights`
 * hook (prime-rl: the newest finished broadcast copied (reflinked where the filesystem can, never hard-linked: prime-rl rewrites a re-broadcast step in place) into `<run dir>/final-weights`). Undefined when the
 * trainer has no such hook or the run finished no step. `launch`: the plan's (`RunPlan.launch`).
 * @example exportFinalWeights(plan.config.plugins.trainer, plan.launch)?.serve // "vllm serve /out/run/final-weights"
 */
export function exportFinalWeights(
  plugin: ResolvedPlugin<"trainer">,
  launch: LaunchContext & { modelName: string },
  env: NodeJS.ProcessEnv = process.env,
): FinalWeights | undefined {
  const hook = plugin.definition.launch?.finalWeights;
  if (!hook) return undefined;
  return hook(plugin.config, { ...launch, lastCompletedStep: readLastCompletedStep(launch.runDir), env });
}

/**
 * The lines `rl` prints about the trained model.
 * @example finalWeightsLines(w) // ["final weights (full model, step 9): /out/run/final-weights", "serve them: vllm serve /out/run/final-weights"]
 */
export function finalWeightsLines(w: FinalWeights): string[] {
  const what = w.kind === "lora" ? "LoRA adapter" : "full model";
  return [`final weights (${what}, step ${w.step}): ${w.dir}`, `serve them: ${w.serve}`];
}
