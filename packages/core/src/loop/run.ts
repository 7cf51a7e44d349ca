import type { ResolvedConfig } from "../config/load.ts";
import type { EventHandlers } from "../events.ts";
import { type HostContext, PluginHost } from "../host.ts";
import type { LogSink } from "../log.ts";
import type { WeightsRef } from "../types.ts";
import { interruptedEval } from "./evaluate.ts";
import { Orchestrator, type RunSummary } from "./orchestrator.ts";

export interface StartRunOptions {
  signal?: AbortSignal;
  /** Where log lines go besides the bus (default: stderr at `run.log_level`). */
  sink?: LogSink;
  /** Extra handlers, e.g. the launcher's progress view (labelled "launcher" in errors). */
  hooks?: Partial<EventHandlers>;
  startStep?: number;
  /** Weights the policy loads before the first rollout (resume: the weights trained up to `startStep`). */
  initialWeights?: WeightsRef;
  /** Context fields every plugin gets from the launcher (inference URL, sandbox GPUs). */
  context?: HostContext;
  /** Called with the orchestrator before it runs (tests read its counters). */
  onOrchestrator?: (o: Orchestrator) => void;
}

/**
 * Creates every plugin of a resolved config through the `PluginHost`, runs the loop and closes everything, also
 * when the loop fails. Never throws for a plugin failure: the summary says what happened.
 * @example const summary = await startRun(await loadConfig("run.toml", { registry }));
 */
export async function startRun(config: ResolvedConfig, options: StartRunOptions = {}): Promise<RunSummary> {
  const { root } = config;
  const runStartMs = Date.now();
  const host = new PluginHost(config, {
    sink: options.sink,
    signal: options.signal,
    context: options.context,
  });
  const { log, pending, signal } = host;
  let summary: RunSummary;
  try {
    await host.createLoggers();
    if (options.hooks) host.on(options.hooks, "launcher");
    const parts = await host.createRunParts();
    const initial = options.initialWeights;
    if (initial && parts.policy.loadWeights) {
      const policy = parts.policy;
      await pending.run(
        `policy.loadWeights v${initial.version} (initial)`,
        root.orchestrator.timeouts.weights_ms,
        () => policy.loadWeights!(initial),
      );
    }
    await host.emit("run:start", {
      runName: root.run.name,
      runDir: config.runDir,
      config: root,
      startedAtMs: runStartMs,
    });
    // rl --resume: the rollouts the store recorded for the resumed steps continue from their last turn
    const recorded =
      options.startStep !== undefined && root.orchestrator.resume_rollouts ? host.recordedRollouts() : [];
    if (recorded.length > 0) log.info(`resuming ${recorded.length} recorded rollout(s) from their last turn`);
    const env = parts.env;
    if (options.startStep !== undefined && env.keepStates) {
      // a rollout that had ended is taken as recorded: only those in flight need their states
      const keep = recorded.filter((r) => r.stopReason === undefined).map((r) => r.rolloutId);
      await pending.run("env.keepStates", root.orchestrator.timeouts.env_open_ms, () =>
        env.keepStates!(keep),
      );
    }
    const resumeEval = interruptedEval(
      root.orchestrator,
      options.startStep,
      (s) => host.evalRecorded(s),
      log,
    );
    const orchestrator = new Orchestrator(parts, {
      recorded,
      resumeEval,
      stepMetrics: () => host.stepMetrics(),
      runStartMs,
      orchestrator: root.orchestrator,
      maxSteps: root.run.max_steps,
      startStep: options.startStep,
      bus: host.bus,
      log,
      signal,
      pending,
    });
    options.onOrchestrator?.(orchestrator);
    summary = await orchestrator.run();
  } catch (error) {
    summary = {
      status: signal.aborted ? "aborted" : "failed",
      stepsCompleted: 0,
      error: error instanceof Error ? error.message : String(error),
      unsettled: pending.unsettled(),
      peakConcurrentRollouts: 0,
    };
  }
  if (summary.error) log.error(`run ${summary.status}: ${summary.error}`);
  if (summary.unsettled.length) log.error(`never settled: ${summary.unsettled.join("; ")}`);
  await host.shutdown({ status: summary.status, error: summary.error, unsettled: summary.unsettled });
  return summary;
}
