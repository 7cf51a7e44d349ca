import type { FinalWeights } from "@air/core";
import { launchContext } from "./launch-context.ts";
import { readLastCompletedStep } from "./rundir.ts";
import type { RunConfig } from "./sections.ts";

export type { FinalWeights } from "@air/core";

/**
 * Makes the run's trained model a deliverable once it ends, through the trainer plugin's `launch.finalWeights`
 * hook (prime-rl: the newest finished broadcast copied (reflinked where the filesystem can, never hard-linked: prime-rl rewrites a re-broadcast step in place) into `<run dir>/final-weights`). Undefined when the
 * trainer has no such hook or the run finished no step.
 * @example exportFinalWeights(config)?.serve // "vllm serve /out/run/final-weights"
 */
export function exportFinalWeights(
  config: RunConfig,
  env: NodeJS.ProcessEnv = process.env,
): FinalWeights | undefined {
  const { definition, config: trainerConfig } = config.plugins.trainer;
  const hook = definition.launch?.finalWeights;
  if (!hook) return undefined;
  return hook(trainerConfig, {
    ...launchContext(config),
    modelName: config.root.model.name,
    lastCompletedStep: readLastCompletedStep(config.runDir),
    env,
  });
}

/**
 * The lines `rl` prints about the trained model.
 * @example finalWeightsLines(w) // ["final weights (full model, step 9): /out/run/final-weights", "serve them: vllm serve /out/run/final-weights"]
 */
export function finalWeightsLines(w: FinalWeights): string[] {
  const what = w.kind === "lora" ? "LoRA adapter" : "full model";
  return [`final weights (${what}, step ${w.step}): ${w.dir}`, `serve them: ${w.serve}`];
}
