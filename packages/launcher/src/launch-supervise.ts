import {
  errorMessage,
  type LogLevel,
  type RunSummary,
  type StepLines,
  startRun,
  stderrSink,
} from "@air/core";
import { stepLines } from "./builtins.ts";
import { type PlannedChildren, plannedChildren } from "./commands.ts";
import { untilStopped } from "./launch-parts.ts";
import type { LaunchOptions, LaunchPlan } from "./launch-plan.ts";
import { processEvents } from "./process-events.ts";
import { progressRecorder } from "./progress-record.ts";
import { CONTAINER_SWEEP_MS, type Reaper, startReaper } from "./reaper.ts";
import { selfEntry, writePidFile, writeProgress } from "./rundir.ts";
import type { RunConfig } from "./sections.ts";
import { RUN_MARKER, Supervisor } from "./supervisor.ts";
import { prepareRestart, RestartBudget, restartChild } from "./trainer-restart.ts";
import { prepareTrainerRunDir } from "./trainer-run.ts";

/** A started run's moving parts, shared by supervise and teardown; they read the plan, never the raw config. */
export interface LaunchSession {
  /** What the orchestrator runs: the plan's config with the plan's loggers and the launcher's own (a new object). */
  runConfig: RunConfig;
  plan: LaunchPlan;
  /** The server and trainer the plan starts, built on demand (a restart builds the trainer again). */
  children: PlannedChildren;
  options: LaunchOptions;
  err: (text: string) => void;
  controller: AbortController;
  supervisor: Supervisor;
  reaper: Reaper;
  view: StepLines;
  /** `RUN_MARKER` in this process's env before the run, restored at teardown. */
  markerBefore: string | undefined;
  onStop: () => void;
  /** Why the run stopped early: a child's exit or failed start. */
  childFailure?: string;
  /** The launcher stopped without waiting for the orchestrator: its plugins may still create containers. */
  abandoned: boolean;
}

/**
 * Opens a run's session: the supervisor (restarting the trainer within `max_restarts`), the pid file, the
 * reaper, the run marker, the abort wiring and the progress view. Nothing is started yet.
 */
export async function openSession(
  plan: LaunchPlan,
  options: LaunchOptions,
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<LaunchSession> {
  const { config, stateDir } = plan.run;
  const { launcher } = config.root;
  const children = plannedChildren(plan.run, plan.gpus);
  const controller = new AbortController();
  const restarts = new RestartBudget(config.root.trainer_process.max_restarts);
  const pidFile = {
    runName: config.root.run.name,
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
          build: () => children.trainer(prepareRestart(config.plugins.trainer, plan.run.launch)),
          signal: controller.signal,
        }).catch((error) => {
          session.childFailure ??= `could not restart the ${child.spec.role}: ${errorMessage(error)}`;
          controller.abort();
        });
        return;
      }
      session.childFailure ??= restarts.failure(child, reason);
      controller.abort();
    },
    onChange: (child, state) => {
      err(`[launcher] ${child.spec.role} ${state}${child.pid > 0 ? ` (pid ${child.pid})` : ""}\n`);
      savePids();
      events.report(child, state);
    },
  });
  const events = processEvents(() => supervisor.children);
  // The step lines: a step-line logger of the launcher's own, on `out` (live on a terminal); loggers that print
  // step lines themselves (the console logger) are left out, so a step shows once.
  const lines = await stepLines({
    totalSteps: config.root.run.max_steps,
    rolloutsPerStep: config.root.orchestrator.batch_size,
    write: out,
    tty: options.tty ?? false,
  });
  const loggers = [...plan.run.loggers, events.plugin, lines.plugin];
  const runConfig: RunConfig = { ...config, plugins: { ...config.plugins, loggers } };
  savePids();
  const reaper = startReaper(stateDir, launcher.grace_ms, plan.run.usesDocker ? CONTAINER_SWEEP_MS : 0);
  const markerBefore = process.env[RUN_MARKER];
  process.env[RUN_MARKER] = stateDir;
  options.force?.addEventListener("abort", () => supervisor.hurry(), { once: true });
  // An aborted run sends SIGTERM to its children at once, while the orchestrator winds down (sandboxes, store),
  // instead of after it (under load that took seconds); teardown's grace period counts from that SIGTERM.
  controller.signal.addEventListener("abort", () => supervisor.terminate(), { once: true });
  const onStop = () => controller.abort();
  options.signal?.addEventListener("abort", onStop, { once: true });
  if (options.signal?.aborted) controller.abort();
  const { view } = lines;
  const session: LaunchSession = {
    runConfig,
    plan,
    children,
    options,
    err,
    controller,
    supervisor,
    reaper,
    view,
    markerBefore,
    onStop,
    abandoned: false,
  };
  return session;
}

/**
 * Supervises a run: prepares the trainer's run dir, starts the inference server and trainer (waiting for their
 * health), then runs the orchestrator in-process (on a worker node: waits for the trainer). Resolves with the
 * orchestrator's summary (none on a worker node or when aborted before it started).
 */
export async function supervise(session: LaunchSession): Promise<RunSummary | undefined> {
  const { runConfig, plan, children, options, err, controller, supervisor, view } = session;
  const { config, worker } = plan.run;
  const { root, runDir } = config;
  const { gpus, startStep } = plan;
  const prepared = prepareTrainerRunDir(config.plugins.trainer, plan.run.trainer, {
    ...plan.run.launch,
    startStep,
    resume: options.resume === true,
  });
  if (prepared.removed.length > 0)
    err(`[launcher] removed ${prepared.removed.length} stale prime-rl path(s)\n`);
  const trainer = () => children.trainer(prepared.resumeStep);
  for (const build of worker ? [trainer] : [children.inference, trainer]) {
    if (controller.signal.aborted) break;
    const spec = await build();
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
    return undefined;
  }
  if (controller.signal.aborted) return undefined;
  const logSink = stderrSink(root.run.log_level as LogLevel);
  const running = startRun(runConfig, {
    sink: (level, source, message) => {
      view.clearLine();
      logSink(level, source, message);
    },
    ...options.run,
    signal: controller.signal,
    // progress.json records a step once its weights arrived (progress-record.ts), not at step:end.
    hooks: progressRecorder((step, metrics) =>
      writeProgress(runDir, { lastCompletedStep: step, updatedAt: new Date().toISOString(), metrics }),
    ),
    context: {
      inferenceUrl: plan.run.urls.inference,
      envGpuIds: gpus.env,
      // A logger continues the run it recorded in this dir (the sqlite store: one run, not two).
      resume: options.resume ? { startStep } : undefined,
      audit: plan.audit,
    },
    startStep,
    initialWeights: plan.initialWeights,
  });
  return untilStopped(running, controller.signal, root.launcher.shutdown_timeout_ms, options.force, () => {
    session.abandoned = true;
  });
}
