import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { LaunchContext } from "@air/core";
import { resumeCheckpoint, stepNumbers } from "./checkpoints.ts";
import type { PrimeRlConfig } from "./options.ts";
import { broadcastStepDir, primeRlPluginPaths, STABLE_FILE } from "./paths.ts";
import { resumeWeightsDir } from "./resume-weights.ts";

/**
 * The newest prime-rl step whose weights the trainer finished (`broadcasts/step_N/STABLE`, or its copy set aside
 * before a restart or resume: `resume-weights/step_N/STABLE`), or undefined when none. A restarted trainer
 * continues after it: its batch is trained once, the next one is read from its file.
 * @example lastStableStep("/abs/out/run/prime-rl") // 4
 */
export function lastStableStep(primeRunDir: string): number | undefined {
  let last: number | undefined;
  for (const root of [dirname(broadcastStepDir(primeRunDir, 0)), dirname(resumeWeightsDir(primeRunDir, 0))])
    for (const step of stepNumbers(root))
      if (existsSync(join(root, `step_${step}`, STABLE_FILE)) && (last === undefined || step > last))
        last = step;
  return last;
}

/**
 * The checkpoint step a restarted prime-rl trainer resumes from (`[resume] step`): the newest complete checkpoint
 * (`.metadata` written) at or before the newest finished broadcast. prime-rl writes STABLE for step N before it
 * saves checkpoint N, so a trainer killed mid-save leaves N with STABLE and a half-written checkpoint: the restart
 * loads the one before and trains N again. Undefined — a fresh start from the base weights — when there is none,
 * e.g. a crash in step 1, when only the startup `broadcasts/step_0` has STABLE (prime-rl refuses `resume.step =
 * 0`). The restarted trainer trains again on the batches after its checkpoint (still on disk: see pruneStepDirs).
 * The plugin's `launch.restartStep` hook.
 * @example restartStep(config, ctx) // 3
 */
export function restartStep(config: PrimeRlConfig, ctx: LaunchContext): number | undefined {
  const { runDir, outputDir } = primeRlPluginPaths(config, ctx.runDir, ctx.configDir);
  return resumeCheckpoint(outputDir, lastStableStep(runDir) ?? 0);
}

/**
 * Why a restarted trainer could not continue the run with this config (the plugin's `launch.restartProblems`
 * hook): with the ZMQ transport the batch in flight went to the dead trainer's socket and is not sent again.
 * @example restartProblems({ ...config, transport: "zmq" }) // ["trainer_process.max_restarts: a restarted ..."]
 */
export function restartProblems(config: PrimeRlConfig): string[] {
  if (config.transport !== "zmq") return [];
  return [
    `trainer_process.max_restarts: a restarted trainer cannot get back the batch sent to the crashed one over ` +
      `ZMQ; use [trainer] transport = "filesystem" or max_restarts = 0`,
  ];
}
