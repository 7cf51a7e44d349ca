import { dirname } from "node:path";
import {
  errorMessage,
  type LogLevel,
  type RunSummary,
  type StartRunOptions,
  startRun,
  stderrSink,
} from "@air/core";
import { inferenceBaseUrl, inferenceChild, trainerChild } from "./commands.ts";
import { sweepRunContainers, writeDockerHosts } from "./containers.ts";
import { diskFullHint } from "./disk.ts";
import { exportFinalWeights, type FinalWeights, finalWeightsLines } from "./final-weights.ts";
import type { GpuMap } from "./gpus.ts";
import { gpuMapFor, isTrainerWorker, nodeStateDir, pluginSpecs, untilStopped } from "./launch-parts.ts";
import { pluginNeeds } from "./plugin-needs.ts";
import { formatChecks, runPreflight } from "./preflight.ts";
import { preparePrimeRlRunDir } from "./prime-rl-run.ts";
import { processEvents } from "./process-events.ts";
import { createProgressView } from "./progress.ts";
import { mergeHooks, progressRecorder } from "./progress-record.ts";
import { CONTAINER_SWEEP_MS, startReaper } from "./reaper.ts";
import { currentHttpRequestLimit } from "./respawn.ts";
import { resumeWeights } from "./resume.ts";
import { summaryLine } from "./run-summary.ts";
import {
  readLastCompletedStep,
  removePidFile,
  selfEntry,
  writePidFile,
  writeProgress,
  writeResolvedConfig,
} from "./rundir.ts";
import type { RunConfig } from "./sections.ts";
import { RUN_MARKER, Supervisor } from "./supervisor.ts";
import { RestartBudget, restartChild, restartResumeStep } from "./trainer-restart.ts";

/** Exit codes: 0 ok, 1 the run failed, 2 bad input (config, arguments, preflight), 130 interrupted. */
export const EXIT = { ok: 0, failed: 1, badInput: 2, interrupted: 130 } as const;

export interface LaunchOptions {
  /** Continue from the step after the last one recorded in `<runDir>/progress.json`. */
  resume?: boolean;
  /** Aborting stops the run in order (SIGINT/SIGTERM to the launcher). */
  signal?: AbortSignal;
  /** Aborting skips the grace periods (a second SIGINT). */
  force?: AbortSignal;
  /** Progress output (default: stdout) and diagnostics (default: stderr). */
  out?: (text: string) => void;
  err?: (text: string) => void;
  tty?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Passed to core's startRun (tests: onOrchestrator, sink). */
  run?: Pick<StartRunOptions, "sink" | "onOrchestrator">;
}

export interface LaunchResult {
  exitCode: number;
  summary?: RunSummary;
  /** Why the run stopped early: a child's exit, a failed start, preflight. */
  error?: string;
  /** Processes that had to be SIGKILLed and containers removed at teardown. */
  killed: string[];
  removedContainers: string[];
  /** The trained model (`<run dir>/final-weights`), when the run finished a step with the prime-rl trainer. */
  finalWeights?: FinalWeights;
}

/**
 * Runs a whole training run: preflight, the inference server and trainer as supervised children, the
 * orchestrator in-process with a progress view, and a teardown that always runs (children stopped,
 * the run's containers removed, pid file removed), whatever ended the run.
 * @example const { exitCode } = await launchRun(await resolveConfig("configs/mlgym/rl_debug.toml", []), { signal });
 */
export async function launchRun(config: RunConfig, options: LaunchOptions = {}): Promise<LaunchResult> {
  const out = options.out ?? ((t: string) => process.stdout.write(t));
  const err = options.err ?? ((t: string) => process.stderr.write(t));
  const env = options.env ?? process.env;
  const { launcher } = config.root;
  const { root, runDir } = config;
  // A worker node keeps its own state (pid file, logs, resolved config) apart from the master's in a shared dir.
  const stateDir = nodeStateDir(config);
  const worker = isTrainerWorker(config);
  const result: LaunchResult = { exitCode: EXIT.failed, killed: [], removedContainers: [] };

  if (launcher.preflight) {
    const checks = await runPreflight(config, { env });
    const failed = checks.filter((c) => c.status === "fail");
    if (failed.length > 0) {
      err(`preflight failed:\n${formatChecks(failed)}\n`);
      return { ...result, exitCode: EXIT.badInput, error: "preflight failed" };
    }
  }
  let gpus: GpuMap;
  try {
    gpus = gpuMapFor(config, env);
  } catch (error) {
    err(`error: ${(error as Error).message}\n`);
    return { ...result, exitCode: EXIT.badInput, error: (error as Error).message };
  }
  let lastStep: number | undefined;
  try {
    lastStep = readLastCompletedStep(runDir);
  } catch (error) {
    err(`error: ${(error as Error).message}\n`);
    return { ...result, exitCode: EXIT.badInput, error: (error as Error).message };
  }
  const startStep = options.resume ? (lastStep ?? -1) + 1 : 0;
  const initialWeights = options.resume ? resumeWeights(config, startStep) : undefined;
  if (options.resume) {
    const from = initialWeights?.path
      ? `weights ${initialWeights.path}`
      : "the base weights (no finished broadcast found)";
    err(`resuming ${runDir} at step ${startStep} from ${from}\n`);
  } else if (lastStep !== undefined)
    err(
      `[launcher] ${runDir} has steps up to ${lastStep}; starting again at 0 (--resume continues instead)\n`,
    );
  writeResolvedConfig(stateDir, {
    file: config.file,
    root,
    plugins: pluginSpecs(config),
    gpus,
    startStep,
    launcherPid: process.pid,
    httpRequestLimit: currentHttpRequestLimit(),
  });

  const needs = pluginNeeds(config);
  // A worker node runs no orchestrator, so no sandbox: it must not sweep the master's containers.
  if (!worker) writeDockerHosts(runDir, needs.dockerHosts ?? []);
  const usesDocker = !worker && (needs.dockerImages.length > 0 || (needs.dockerHosts?.length ?? 0) > 0);
  const controller = new AbortController();
  let childFailure: string | undefined;
  const restarts = new RestartBudget(root.trainer_process.max_restarts);
  // the launcher stopped without waiting for the orchestrator: its plugins may still create containers
  let abandoned = false;
  const pidFile = {
    runName: root.run.name,
    runDir: stateDir,
    launcher: selfEntry(),
    startedAt: new Date().toISOString(),
  };
  const savePids = () =>
    writePidFile(stateDir, {
      ...pidFile,
      children: supervisor.children
        .filter((c) => c.pid > 0 && !c.exit)
        .map((c) => ({ role: c.spec.role, pid: c.pid, pgid: c.pgid, startTime: c.startTime })),
    });
  const supervisor: Supervisor = new Supervisor({
    runDir: stateDir,
    graceMs: launcher.grace_ms,
    tailLines: launcher.log_tail_lines,
    onUnexpectedExit: (child, reason) => {
      if (!controller.signal.aborted && restarts.take(child)) {
        err(
          `[launcher] ${reason}\n[launcher] restarting the ${child.spec.role} (restart ${restarts.restarts} of ${restarts.max})\n`,
        );
        restartChild({
          supervisor,
          child,
          build: () => trainerChild(config, gpus, { primeStep: restartResumeStep(config) }),
          signal: controller.signal,
        }).catch((error) => {
          childFailure ??= `could not restart the ${child.spec.role}: ${errorMessage(error)}`;
          controller.abort();
        });
        return;
      }
      childFailure ??= restarts.failure(child, reason);
      controller.abort();
    },
    onChange: (child, state) => {
      err(`[launcher] ${child.spec.role} ${state}${child.pid > 0 ? ` (pid ${child.pid})` : ""}\n`);
      savePids();
      events.report(child, state);
    },
  });
  const events = processEvents(() => supervisor.children);
  config.plugins.loggers.push(events.plugin);
  savePids();
  const reaper = startReaper(stateDir, launcher.grace_ms, usesDocker ? CONTAINER_SWEEP_MS : 0);
  const markerBefore = process.env[RUN_MARKER];
  process.env[RUN_MARKER] = stateDir;
  options.force?.addEventListener("abort", () => supervisor.hurry(), { once: true });
  // An aborted run sends SIGTERM to its children at once, while the orchestrator winds down (sandboxes, store),
  // instead of after it (under load that took seconds); teardown's grace period counts from that SIGTERM.
  controller.signal.addEventListener("abort", () => supervisor.terminate(), { once: true });
  const onStop = () => controller.abort();
  options.signal?.addEventListener("abort", onStop, { once: true });
  if (options.signal?.aborted) controller.abort();
  const view = createProgressView({
    totalSteps: root.run.max_steps,
    rolloutsPerStep: root.orchestrator.batch_size,
    write: out,
    tty: options.tty ?? false,
  });

  if (worker) err("[launcher] trainer worker node: only the trainer runs here (node_rank > 0)\n");
  try {
    const prepared = preparePrimeRlRunDir(config, startStep, options.resume === true);
    if (prepared.removed.length > 0)
      err(`[launcher] removed ${prepared.removed.length} stale prime-rl path(s)\n`);
    const trainer = (c: RunConfig, g: GpuMap) => trainerChild(c, g, { primeStep: prepared.resumeStep });
    for (const build of worker ? [trainer] : [inferenceChild, trainer]) {
      if (controller.signal.aborted) break;
      const spec = await build(config, gpus);
      if (!spec) continue;
      err(`[launcher] starting ${spec.role}: ${spec.argv.join(" ")}\n`);
      const child = supervisor.start(spec);
      if (spec.healthUrls?.length) await supervisor.waitReady(child, controller.signal);
    }
    if (worker) {
      const trainer = supervisor.children[0];
      const aborted = new Promise<void>((resolve) =>
        controller.signal.addEventListener("abort", () => resolve()),
      );
      if (trainer) await Promise.race([trainer.exited, aborted]);
    } else if (!controller.signal.aborted) {
      const logSink = stderrSink(root.run.log_level as LogLevel);
      const running = startRun(config, {
        sink: (level, source, message) => {
          view.clearLine();
          logSink(level, source, message);
        },
        ...options.run,
        signal: controller.signal,
        // progress.json records a step once its weights arrived (progress-record.ts), not at step:end.
        hooks: mergeHooks(
          view.hooks,
          progressRecorder((step, metrics) =>
            writeProgress(runDir, { lastCompletedStep: step, updatedAt: new Date().toISOString(), metrics }),
          ),
        ),
        context: {
          inferenceUrl: inferenceBaseUrl(config),
          envGpuIds: gpus.env,
          // A logger continues the run it recorded in this dir (the sqlite store: one run, not two).
          resume: options.resume ? { startStep } : undefined,
        },
        startStep,
        initialWeights,
      });
      result.summary = await untilStopped(
        running,
        controller.signal,
        launcher.shutdown_timeout_ms,
        options.force,
        () => {
          abandoned = true;
        },
      );
    }
  } catch (error) {
    if (!options.signal?.aborted) childFailure ??= (error as Error).message;
  } finally {
    view.finish();
    options.signal?.removeEventListener("abort", onStop);
    const grace = options.force?.aborted ? 0 : launcher.grace_ms;
    result.killed = await supervisor.stopAll(grace);
    const sweep = worker ? { removed: [], unreachable: [] } : await sweepRunContainers(runDir);
    result.removedContainers = sweep.removed;
    removePidFile(stateDir);
    if (markerBefore === undefined) delete process.env[RUN_MARKER];
    else process.env[RUN_MARKER] = markerBefore;
    if (usesDocker && sweep.unreachable.length > 0) {
      // e.g. dockerd restarting: the reaper removes the run's containers once the engine answers again
      err(
        `[launcher] could not reach ${sweep.unreachable.join(", ")} to remove the run's containers; its reaper ` +
          `(pid ${reaper.pid}) keeps trying for ${CONTAINER_SWEEP_MS / 60_000} min (or: rl clean ${dirname(runDir)})\n`,
      );
      reaper.handOffContainers();
    } else if (abandoned) {
      err(
        `[launcher] stopped without waiting for the orchestrator; its reaper (pid ${reaper.pid}) sweeps the run's containers for a while\n`,
      );
      reaper.handOffAbandoned();
    } else await reaper.release();
  }
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
  if (childFailure) {
    err(`error: ${childFailure}\n`);
    diskHint(childFailure);
    return { ...result, exitCode: EXIT.failed, error: childFailure };
  }
  // The trained model is the run's deliverable: named (and linked to <run dir>/final-weights) however it ended.
  const deliver = () => {
    if (worker) return;
    try {
      result.finalWeights = exportFinalWeights(config, env);
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
