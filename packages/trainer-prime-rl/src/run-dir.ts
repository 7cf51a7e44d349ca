import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { PreparedRunDir, RunDirContext } from "@air/core";
import { checkpointDir, incompleteCheckpointSteps, resumeCheckpoint, stepNumbers } from "./checkpoints.ts";
import { cleanFutureSteps } from "./clean.ts";
import type { PrimeRlConfig } from "./options.ts";
import { primeRlPluginPaths } from "./paths.ts";
import { resumeWeightsDir } from "./resume-weights.ts";
import { lastPrimeStepUpTo } from "./steps.ts";

/**
 * Before the launcher starts a trainer for the prime-rl transport, do what prime-rl's `rl` does
 * (`clean_future_steps`): a fresh start removes every old `rollouts/step_*` and `broadcasts/step_*` (else the
 * trainer's receiver, starting at step 1, would train on the previous run's batches and air would take stale
 * weights for fresh ones) plus the old metrics, `control/evicted.txt` and air's step map; a resume removes the
 * steps (and checkpoints) after the resume point, and every checkpoint whose save never finished (no `.metadata`:
 * the trainer died mid-save; it is passed over, and saved again when its step is trained again). Returns
 * `trainerStep`, the last prime-rl step taken by an air step before `startStep` (undefined on a fresh start), and
 * `resumeStep`, the newest complete trainer checkpoint at or before it (`[resume] step`; undefined: the trainer
 * starts from the base weights and trains the kept batches again), and
 * what was removed. Throws when the trainer could not continue: the ZMQ transport keeps no batch to train again.
 * A worker node only reads the resume point (the master prepares the shared output dir; a worker that starts late
 * must not delete what the master wrote). The plugin's `launch.prepareRunDir` hook.
 * @example prepareRunDir(config, { ...ctx, startStep: 4, resume: true, nodeRank: 0 }) // { trainerStep: 4, resumeStep: 4, removed: [".../rollouts/step_5"] }
 */
export function prepareRunDir(config: PrimeRlConfig, ctx: RunDirContext): PreparedRunDir {
  const { startStep, resume } = ctx;
  const paths = {
    version: config.prime_rl_version,
    ...primeRlPluginPaths(config, ctx.runDir, ctx.configDir),
  };
  const last = resume && startStep > 0 ? lastPrimeStepUpTo(paths.runDir, startStep - 1) : 0;
  const primeStep = last > 0 ? last : undefined;
  const resumeStep = primeStep === undefined ? undefined : resumeCheckpoint(paths.outputDir, primeStep);
  if (primeStep !== undefined && resumeStep !== primeStep && config.transport === "zmq")
    throw new Error(
      `cannot resume at prime-rl step ${primeStep}: the newest trainer checkpoint at or before it is ` +
        `${resumeStep ?? "none"} (${checkpointDir(paths.outputDir)}), and the batches after it went over ZMQ, ` +
        `not to files the trainer could train on again; [trainer_process] ckpt_interval = 1 checkpoints every step`,
    );
  // A worker's trainer ranks resume from the same checkpoint as the master's; only the master cleans.
  if (ctx.nodeRank > 0) return { trainerStep: primeStep, resumeStep, removed: [] };
  const removed = cleanFutureSteps({
    version: paths.version,
    outputDir: paths.outputDir,
    runDir: paths.runDir,
    metricsFile: paths.metricsFile,
    resumeStep: primeStep ?? -1,
  });
  // The trainer trains every step after its checkpoint again (the kept batches, then new ones), writing their rows
  // again: the rows past the checkpoint go, so each step's row is written once (a step the trainer ran ahead of
  // air to, and one whose checkpoint interval or half-written save put it behind the checkpoint).
  const trainedAgainAfter = resumeStep ?? 0;
  if (primeStep !== undefined && existsSync(paths.metricsFile)) {
    const lines = readFileSync(paths.metricsFile, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "");
    const kept = lines.filter((l) => {
      try {
        return !(((JSON.parse(l) as { step?: unknown }).step as number) > trainedAgainAfter);
      } catch {
        return true;
      }
    });
    if (kept.length < lines.length) {
      writeFileSync(paths.metricsFile, kept.map((l) => `${l}\n`).join(""));
      removed.push(
        `${paths.metricsFile} (${lines.length - kept.length} row(s) past step ${trainedAgainAfter})`,
      );
    }
  }
  // A fresh start also drops the previous run's deliverable (the final weights named are always this run's) and
  // the weights an earlier --resume set aside.
  if (!resume)
    for (const stale of [
      join(ctx.runDir, "final-weights"),
      join(ctx.runDir, "final-weights.json"),
      dirname(resumeWeightsDir(paths.runDir, 0)),
    ])
      if (existsSync(stale)) {
        rmSync(stale, { recursive: true, force: true });
        removed.push(stale);
      }
  const ckpts = checkpointDir(paths.outputDir);
  const incomplete = new Set(incompleteCheckpointSteps(paths.outputDir));
  for (const s of stepNumbers(ckpts))
    if (s > (primeStep ?? 0) || incomplete.has(s)) {
      rmSync(join(ckpts, `step_${s}`), { recursive: true, force: true });
      removed.push(join(ckpts, `step_${s}`));
    }
  return { trainerStep: primeStep, resumeStep, removed };
}
