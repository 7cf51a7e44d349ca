import type { OrchestratorConfig } from "../config/schema.ts";
import type { EventBus } from "../events.ts";
import type { Logger } from "../log.ts";
import type { PendingWork } from "../pending.ts";
import type { Environment } from "../plugin.ts";
import type { Example, Trajectory } from "../types.ts";
import { addSummary, summarize } from "./stats.ts";

/**
 * Whether step `step` is followed by a periodic evaluation (`orchestrator.eval_every`).
 * @example evalFollows({ eval_every: 2 }, 1) // true: after steps 1, 3, 5, …
 */
export function evalFollows(o: Pick<OrchestratorConfig, "eval_every">, step: number): boolean {
  return o.eval_every > 0 && step >= 0 && (step + 1) % o.eval_every === 0;
}

/**
 * On `rl --resume` at `startStep`: the step whose eval a crash cut short, to run before step `startStep` trains
 * (undefined: none). The eval after step `startStep − 1` runs once that step's weights arrived, so a kill during
 * it resumes after that step; the run store says whether its eval:end was recorded (`evalRecorded`, the loggers'
 * `PluginBase.evalRecorded`). Without a logger that records evals it cannot be known, and is not run again.
 * @example interruptedEval(o, 2, (s) => store.evalRecorded(s), log) // 1 when eval_every = 2 and the store has no eval:end for step 1
 */
export function interruptedEval(
  o: Pick<OrchestratorConfig, "eval_every">,
  startStep: number | undefined,
  evalRecorded: (step: number) => boolean | undefined,
  log: Logger,
): number | undefined {
  if (startStep === undefined) return undefined;
  const step = startStep - 1;
  if (!evalFollows(o, step)) return undefined;
  const recorded = evalRecorded(step);
  if (recorded === false) {
    log.info(`the eval after step ${step} was cut short: it runs again before step ${startStep}`);
    return step;
  }
  if (recorded === undefined)
    log.warn(
      `the eval after step ${step} is not run again: no logger records evals (the sqlite logger does), so whether it ended is unknown`,
    );
  return undefined;
}

export interface EvalRun {
  env: Environment;
  bus: EventBus;
  pending: PendingWork;
  orchestrator: OrchestratorConfig;
  policyVersion: () => number;
  signal: AbortSignal;
  /**
   * One eval rollout of `example` in group `groupId` (with retries; a recorded one continues: `rl --resume`).
   * `keepState` takes its `dropState` when it ends: the eval runs them once it ended.
   */
  rollout: (
    example: Example,
    groupId: string,
    keepState: (step: number, drop: () => Promise<void>) => void,
  ) => Promise<Trajectory>;
}

/**
 * The periodic evaluation after step `step`: `rollouts_per_example` rollouts of each eval example with the weights
 * trained so far (never trained on); emits eval:end with per-task reward means, then drops the rollouts' states
 * (snapshots): a kill before eval:end reached the store re-runs the eval on `--resume`, continuing them. An eval
 * cut short by the run's abort (SIGINT) emits no eval:end and keeps its states: `--resume` runs it again too.
 * @example await runEval(run, 3, Date.now()); // eval:end { step: 3, policyVersion: 4, … }
 */
export async function runEval(run: EvalRun, step: number, startMs: number): Promise<void> {
  const { orchestrator: o, bus } = run;
  const examples = await run.pending.run("env.examples(eval)", o.timeouts.env_open_ms, () =>
    run.env.examples("eval"),
  );
  const version = run.policyVersion();
  const drops: Array<() => Promise<void>> = [];
  const keep = (_step: number, drop: () => Promise<void>) => drops.push(drop);
  const rollouts: Promise<Trajectory>[] = [];
  for (const example of examples) {
    for (let r = 0; r < o.rollouts_per_example; r++)
      rollouts.push(run.rollout(example, `eval:${step}:${example.id}`, keep));
  }
  const trajectories = await Promise.all(rollouts);
  if (run.signal.aborted) return;
  const metrics = evalMetrics(trajectories, run.env.scores !== false);
  metrics["eval/time_s"] = (Date.now() - startMs) / 1000;
  await bus.emit("eval:end", { step, policyVersion: version, trajectories, metrics });
  for (const drop of drops) await drop();
}

/** The eval's metrics: rollouts ok/failed, the reward's summary, the no-score fraction, each task's mean reward. */
function evalMetrics(trajectories: Trajectory[], scores: boolean): Record<string, number> {
  const ok = trajectories.filter((t) => t.stopReason !== "failed");
  const metrics: Record<string, number> = {
    "eval/rollouts": trajectories.length,
    "eval/failed": trajectories.length - ok.length,
  };
  addSummary(
    metrics,
    "eval/reward",
    ok.map((t) => t.reward ?? 0),
  );
  if (scores)
    metrics["eval/no_score_frac"] = ok.length
      ? ok.filter((t) => !t.turns.some((x) => x.scores)).length / ok.length
      : 0;
  const tasks = new Map<string, number[]>();
  for (const t of ok) tasks.set(t.task, [...(tasks.get(t.task) ?? []), t.reward ?? 0]);
  for (const [task, rewards] of tasks) metrics[`eval/${task}/reward/mean`] = summarize(rewards).mean;
  return metrics;
}
