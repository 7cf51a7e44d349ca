import { dirname } from "node:path";
import { errorMessage } from "@air/core";
import { sweepRunContainers } from "./containers.ts";
import { diskFullHint } from "./disk.ts";
import { exportFinalWeights, finalWeightsLines } from "./final-weights.ts";
import { EXIT, type LaunchResult } from "./launch-plan.ts";
import type { LaunchSession } from "./launch-supervise.ts";
import { CONTAINER_SWEEP_MS } from "./reaper.ts";
import { summaryLine } from "./run-summary.ts";
import { readLastCompletedStep, removePidFile } from "./rundir.ts";
import { RUN_MARKER } from "./supervisor.ts";

/**
 * Tears a run down, whatever ended it: children stopped (SIGKILL after the grace period), the run's containers
 * removed (or handed to the reaper when docker cannot be reached), the pid file removed, the run marker restored.
 */
async function teardown(session: LaunchSession): Promise<Pick<LaunchResult, "killed" | "removedContainers">> {
  const { plan, options, err, supervisor, reaper } = session;
  const { config, stateDir, usesDocker, worker } = plan.run;
  session.view.finish();
  options.signal?.removeEventListener("abort", session.onStop);
  const grace = options.force?.aborted ? 0 : config.root.launcher.grace_ms;
  const killed = await supervisor.stopAll(grace);
  const sweep = worker ? { removed: [], unreachable: [] } : await sweepRunContainers(config.runDir);
  removePidFile(stateDir);
  if (session.markerBefore === undefined) delete process.env[RUN_MARKER];
  else process.env[RUN_MARKER] = session.markerBefore;
  if (usesDocker && sweep.unreachable.length > 0) {
    // e.g. dockerd restarting: the reaper removes the run's containers once the engine answers again
    err(
      `[launcher] could not reach ${sweep.unreachable.join(", ")} to remove the run's containers; its reaper ` +
        `(pid ${reaper.pid}) keeps trying for ${CONTAINER_SWEEP_MS / 60_000} min (or: rl clean ${dirname(config.runDir)})\n`,
    );
    reaper.handOffContainers();
  } else if (session.abandoned) {
    err(
      `[launcher] stopped without waiting for the orchestrator; its reaper (pid ${reaper.pid}) sweeps the run's containers for a while\n`,
    );
    reaper.handOffAbandoned();
  } else await reaper.release();
  return { killed, removedContainers: sweep.removed };
}

/**
 * The run's result after teardown: the exit code, the summary line, a disk-full hint, and the final weights
 * (named and linked however the run ended, but not after a child failed).
 */
function finishRun(session: LaunchSession, result: LaunchResult): LaunchResult {
  const { plan, options, err } = session;
  const { config, worker } = plan.run;
  const { runDir } = config;
  for (const k of result.killed) err(`[launcher] killed: ${k}\n`);
  if (result.removedContainers.length)
    err(`[launcher] removed ${result.removedContainers.length} container(s)\n`);
  const summary = result.summary;
  const diskHint = (error: string | undefined) => {
    let last: number | undefined;
    try {
      last = readLastCompletedStep(runDir);
    } catch {}
    const hint = diskFullHint(runDir, error, config.file, last);
    if (hint) err(`[launcher] ${hint}\n`);
  };
  if (session.childFailure) {
    err(`error: ${session.childFailure}\n`);
    diskHint(session.childFailure);
    return { ...result, exitCode: EXIT.failed, error: session.childFailure };
  }
  // The trained model is the run's deliverable: named (and linked to <run dir>/final-weights) however it ended.
  const deliver = () => {
    if (worker) return;
    try {
      result.finalWeights = exportFinalWeights(
        config.plugins.trainer,
        plan.run.launch,
        options.env ?? process.env,
      );
      if (result.finalWeights) for (const line of finalWeightsLines(result.finalWeights)) err(`${line}\n`);
    } catch (error) {
      err(`[launcher] could not export the final weights: ${errorMessage(error)}\n`);
    }
  };
  if (options.signal?.aborted) {
    err(`run interrupted after ${summary?.stepsCompleted ?? 0} step(s); continue with --resume\n`);
    deliver();
    return { ...result, exitCode: EXIT.interrupted };
  }
  if (worker) return { ...result, exitCode: EXIT.ok };
  if (!summary) return { ...result, exitCode: EXIT.failed, error: "the run did not start" };
  const end = summaryLine(summary);
  err(`${end.line}\n`);
  deliver();
  if (!end.ok) diskHint(summary.error);
  return {
    ...result,
    exitCode: end.ok ? EXIT.ok : EXIT.failed,
    error: summary.error ?? (end.ok ? undefined : end.line),
  };
}

/**
 * Ends a run, whatever ended it: the teardown (children, containers, pid file, run marker), then the run's result
 * (exit code, summary line, final weights). `result` holds the summary, if the orchestrator gave one.
 * @example return endRun(session, { exitCode: EXIT.failed, summary, killed: [], removedContainers: [] });
 */
export async function endRun(session: LaunchSession, result: LaunchResult): Promise<LaunchResult> {
  return finishRun(session, { ...result, ...(await teardown(session)) });
}
