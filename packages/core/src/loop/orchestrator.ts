import type { OrchestratorConfig } from "../config/schema.ts";
import { AirError, errorMessage } from "../errors.ts";
import type { EventBus } from "../events.ts";
import type { Logger } from "../log.ts";
import { PendingWork, Semaphore } from "../pending.ts";
import type { AdvantageEstimator, Environment, Policy, Trainer, TrajectoryStrategy } from "../plugin.ts";
import type { Example, Trajectory } from "../types.ts";
import { attemptDeps, rolloutWithRetries } from "./attempt.ts";
import { buildBatch } from "./batch.ts";
import { evalFollows, runEval } from "./evaluate.ts";
import { FailureWatch, type RunTotals } from "./failures.ts";
import type { RecordedRollout } from "./resume.ts";
import type { RewardEntry } from "./rewards.ts";
import type { RolloutDeps } from "./rollout.ts";
import { growTree } from "./tree.ts";
import { treeAdvantage } from "./tree-advantage.ts";
import type { TreeConfig } from "./tree-config.ts";
import { treeMetrics } from "./tree-score.ts";

/** Below this many seconds a step's rate (turns/s) means nothing and is left out. */
export const MIN_RATE_S = 0.05;

export interface RunParts {
  env: Environment;
  policy: Policy;
  trainer: Trainer;
  advantage: AdvantageEstimator;
  strategy: TrajectoryStrategy;
  rewards: RewardEntry[];
  /** Plugin names for error messages. */
  names: { env: string; policy: string; trainer: string };
}

export interface OrchestratorOptions {
  orchestrator: OrchestratorConfig;
  maxSteps: number;
  /** First step to run (for resume); weights are assumed to be at this version. */
  startStep?: number;
  bus: EventBus;
  log: Logger;
  signal: AbortSignal;
  pending?: PendingWork;
  /** Plugin counters merged into each step's metrics. */
  stepMetrics?: () => Record<string, number>;
  /** When the run started (`startRun`'s entry, before its plugins were created): the first step's time counts from it. */
  runStartMs?: number;
  /** Rollouts of the resumed steps the store recorded (`rl --resume`): each continues from its last turn. */
  recorded?: RecordedRollout[];
  /** `rl --resume`: the step whose eval a crash cut short (`interruptedEval`), run before the first step. */
  resumeEval?: number;
}

export interface RunSummary {
  status: "completed" | "failed" | "aborted";
  stepsCompleted: number;
  error?: string;
  unsettled: string[];
  peakConcurrentRollouts: number;
  /** Rollouts ok/failed and samples trained over the run (set by the orchestrator). */
  totals?: RunTotals;
}

/**
 * The RL loop. Step s needs `batch_size` rollouts (examples × rollouts_per_example). Rollouts of step j may start
 * once the trained policy version is at least j − max_off_policy_steps, so generation overlaps training.
 */
export class Orchestrator {
  readonly pending: PendingWork;
  private readonly semaphore: Semaphore;
  private rolloutCounter = 0;
  /** When the previous step's line was emitted (the run's start before the first). */
  private lastStepMs = Date.now();
  private readonly failures: FailureWatch;
  /** Recorded rollouts not yet resumed, by group (`${step}:${exampleId}`). */
  private readonly recorded = new Map<string, RecordedRollout[]>();
  /** Their ids: a new rollout never takes one. */
  private readonly recordedIds = new Set<string>();
  /** Ended train rollouts' `dropState`, by step: run once that step is trained (`keepState`). */
  private readonly heldStates = new Map<number, Array<() => Promise<void>>>();

  constructor(
    private readonly parts: RunParts,
    private readonly options: OrchestratorOptions,
  ) {
    this.pending = options.pending ?? new PendingWork();
    this.semaphore = new Semaphore(options.orchestrator.max_concurrent_rollouts);
    this.failures = new FailureWatch(options.orchestrator.max_failed_steps);
    for (const r of options.recorded ?? []) {
      this.recorded.set(r.groupId, [...(this.recorded.get(r.groupId) ?? []), r]);
      this.recordedIds.add(r.rolloutId);
    }
  }

  /** The next new rollout id of `step` (`s3-r17`; `e…` for eval), never one a recorded rollout holds. */
  private nextRolloutId(prefix: "s" | "e", step: number): string {
    for (;;) {
      const id = `${prefix}${step}-r${this.rolloutCounter++}`;
      if (!this.recordedIds.has(id)) return id;
    }
  }

  get peakConcurrentRollouts(): number {
    return this.semaphore.peak;
  }

  async run(): Promise<RunSummary> {
    const { orchestrator: o, maxSteps, bus, signal } = this.options;
    const start = this.options.startStep ?? 0;
    this.lastStepMs = this.options.runStartMs ?? Date.now();
    this.failures.totals.weightUpdates = 0;
    let completed = 0;
    const generations = new Map<number, Promise<Trajectory[]>>();
    try {
      const examples = await this.pending.run("env.examples(train)", o.timeouts.env_open_ms, () =>
        this.parts.env.examples("train"),
      );
      if (examples.length === 0) throw new AirError("ENV_FAILED", "the environment has no train examples");
      if (o.tree && !this.parts.env.canFork) {
        throw new AirError(
          "CONFIG_INVALID",
          `[orchestrator.tree] needs an env whose sessions fork; the ${this.parts.names.env} env does not (canFork unset)`,
        );
      }
      if (this.options.resumeEval !== undefined && !signal.aborted)
        await this.evaluate(this.options.resumeEval);
      let launched = start;
      for (let step = start; step < maxSteps; step++) {
        if (signal.aborted) break;
        while (launched < maxSteps && launched <= step + o.max_off_policy_steps) {
          const p = this.generateStep(launched, examples);
          p.catch(() => {});
          generations.set(launched, p);
          launched++;
        }
        await bus.emit("step:start", { step, policyVersion: this.parts.policy.version });
        const trajectories = await generations.get(step)!;
        generations.delete(step);
        if (signal.aborted) break;
        await this.trainStep(step, trajectories);
        completed++;
        if (evalFollows(o, step) && !signal.aborted) await this.evaluate(step);
      }
      await Promise.allSettled(generations.values());
      const status = signal.aborted ? "aborted" : "completed";
      return {
        status,
        stepsCompleted: completed,
        unsettled: [],
        peakConcurrentRollouts: this.semaphore.peak,
        totals: this.failures.totals,
      };
    } catch (error) {
      const status = signal.aborted ? "aborted" : "failed";
      return {
        status,
        stepsCompleted: completed,
        error: errorMessage(error),
        unsettled: this.pending.unsettled(),
        peakConcurrentRollouts: this.semaphore.peak,
        totals: this.failures.totals,
      };
    }
  }

  private async trainStep(step: number, trajectories: Trajectory[]): Promise<void> {
    const { orchestrator: o, bus, log, signal } = this.options;
    const t0 = Date.now();
    const { batch, warnings } = buildBatch({
      step,
      trajectories,
      failedGroups: o.failed_groups,
      filterZeroAdvantages: o.filter_zero_advantages,
      advantage: o.tree ? treeAdvantage(o.tree) : this.parts.advantage,
      strategy: this.parts.strategy,
      produces: { scores: this.parts.env.scores !== false, parseErrors: this.parts.policy.parses !== false },
    });
    if (o.tree) Object.assign(batch.metrics, treeMetrics(trajectories));
    Object.assign(batch.metrics, this.options.stepMetrics?.() ?? {});
    // The step's time is the wall time since the previous step's line (the run's start for the first): the
    // training and weight loads of the step before are in it, and rollouts generated ahead of time (off-policy)
    // are not counted twice, so the steps' times add up to the run's. A rate over less than MIN_RATE_S is left out.
    const stepSeconds = (t0 - this.lastStepMs) / 1000;
    this.lastStepMs = t0;
    const turns = trajectories.reduce((a, t) => a + t.turns.length, 0);
    batch.metrics["time/step_s"] = stepSeconds;
    if (stepSeconds >= MIN_RATE_S) batch.metrics["throughput/turns_per_s"] = turns / stepSeconds;
    for (const w of warnings) log.warn(w);
    await bus.emit("step:end", { step, trajectories, batch, metrics: batch.metrics, warnings });
    const cannotTrain = this.failures.record(trajectories, batch.samples.length);
    if (cannotTrain !== undefined) throw new AirError("RUN_FAILED", cannotTrain);
    await this.pending.run(
      `trainer.submit step ${step}`,
      o.timeouts.trainer_submit_ms,
      () => this.parts.trainer.submit(batch),
      {
        plugin: this.parts.names.trainer,
        hook: "submit",
      },
    );
    const weights = await this.pending.run(
      `trainer.waitForWeights step ${step}`,
      o.timeouts.weights_ms,
      () => this.parts.trainer.waitForWeights(step, signal),
      { plugin: this.parts.names.trainer, hook: "waitForWeights" },
    );
    if (weights) {
      this.failures.totals.weightUpdates = (this.failures.totals.weightUpdates ?? 0) + 1;
      const policy = this.parts.policy;
      if (policy.loadWeights) {
        await this.pending.run(`policy.loadWeights v${weights.version}`, o.timeouts.weights_ms, () =>
          policy.loadWeights!(weights),
        );
      }
      const metrics = { ...(weights.metrics ?? {}), "time/train_wait_s": (Date.now() - t0) / 1000 };
      await bus.emit("weights:updated", { weights, metrics });
    }
    await this.dropHeldStates(step);
  }

  /** The held states of rollouts of steps up to `step`, now trained: a resume starts after them. */
  private async dropHeldStates(step: number): Promise<void> {
    for (const [s, drops] of [...this.heldStates]) {
      if (s > step) continue;
      this.heldStates.delete(s);
      for (const drop of drops) await drop();
    }
  }

  /** The eval after `step` (loop/evaluate.ts); its time is its own (eval/time_s, on its own line), not the next step's. */
  private async evaluate(step: number): Promise<void> {
    const { orchestrator, bus, signal } = this.options;
    const e0 = Date.now();
    await runEval(
      {
        env: this.parts.env,
        bus,
        signal,
        pending: this.pending,
        orchestrator,
        policyVersion: () => this.parts.policy.version,
        rollout: (example, groupId, keep) => this.rolloutWithRetries(step, example, groupId, "eval", keep),
      },
      step,
      e0,
    );
    this.lastStepMs += Date.now() - e0;
  }

  private async generateStep(step: number, examples: Example[]): Promise<Trajectory[]> {
    const { orchestrator: o } = this.options;
    const perStep = o.batch_size / o.rollouts_per_example;
    const chosen = Array.from(
      { length: perStep },
      (_, i) => examples[(step * perStep + i) % examples.length]!,
    );
    if (o.tree) {
      const tree = o.tree;
      const trees = chosen.map((example) => this.growTree(step, example, tree));
      return (await Promise.all(trees)).flat();
    }
    const rollouts: Promise<Trajectory>[] = [];
    for (const example of chosen) {
      const groupId = `${step}:${example.id}`;
      for (let r = 0; r < o.rollouts_per_example; r++)
        rollouts.push(this.rolloutWithRetries(step, example, groupId));
    }
    return Promise.all(rollouts);
  }

  /** The tree rollouts of one example (`[orchestrator.tree]`): every node, each holding a rollout slot. */
  private growTree(step: number, example: Example, tree: TreeConfig): Promise<Trajectory[]> {
    const { orchestrator: o, bus, log, signal } = this.options;
    const groupId = `${step}:${example.id}`;
    const recorded = this.recorded.get(groupId);
    this.recorded.delete(groupId);
    const deps = attemptDeps(this.parts, { bus, log, signal, pending: this.pending, orchestrator: o });
    deps.resumeRollouts = o.resume_rollouts;
    if (o.resume_rollouts)
      deps.keepState = (s, drop) => this.heldStates.set(s, [...(this.heldStates.get(s) ?? []), drop]);
    return growTree(
      { ...deps, tree, maxLeaves: o.rollouts_per_example, slot: () => this.semaphore.acquire() },
      { example, groupId, step, nextId: () => this.nextRolloutId("s", step), recorded },
    );
  }

  private async rolloutWithRetries(
    step: number,
    example: Example,
    groupId: string,
    split: "train" | "eval" = "train",
    keepEvalState?: RolloutDeps["keepState"],
  ): Promise<Trajectory> {
    const { orchestrator: o, bus, log, signal } = this.options;
    const release = await this.semaphore.acquire();
    const recorded = this.recorded.get(groupId)?.shift();
    const deps = attemptDeps(this.parts, { bus, log, signal, pending: this.pending, orchestrator: o });
    deps.resumeRollouts = o.resume_rollouts;
    // a train rollout's state is held until its step is trained, an eval's until the eval ended
    if (deps.resumeRollouts)
      deps.keepState =
        keepEvalState ?? ((s, drop) => this.heldStates.set(s, [...(this.heldStates.get(s) ?? []), drop]));
    try {
      return await rolloutWithRetries(deps, {
        rolloutId: recorded?.rolloutId ?? this.nextRolloutId(split === "eval" ? "e" : "s", step),
        example,
        groupId,
        step,
        split,
        recorded,
      });
    } finally {
      release();
    }
  }
}
