import type { OrchestratorConfig } from "../config/schema.ts";
import { AirError, errorMessage } from "../errors.ts";
import type { EventBus } from "../events.ts";
import type { Logger } from "../log.ts";
import type { PendingWork } from "../pending.ts";
import type { Environment, Policy } from "../plugin.ts";
import { type Example, SCHEMA_VERSION, type Trajectory } from "../types.ts";
import { applyRewards, type RewardEntry } from "./rewards.ts";
import { type RolloutDeps, runRollout } from "./rollout.ts";

export interface AttemptDeps extends RolloutDeps {
  rewards: RewardEntry[];
  retries: number;
  timeouts: RolloutDeps["timeouts"] & { reward_ms: number };
  log: Logger;
  /** Version reported in rollout:start. */
  policyVersion: () => number;
}

/**
 * The one place rollout dependencies are built from a run's plugins and `[orchestrator]` (used by the training
 * loop and by `eval`).
 * @example const deps = attemptDeps(parts, { bus, log, signal, pending, orchestrator: config.root.orchestrator });
 */
export function attemptDeps(
  parts: { env: Environment; policy: Policy; rewards: RewardEntry[]; names: { env: string; policy: string } },
  run: {
    bus: EventBus;
    log: Logger;
    signal: AbortSignal;
    pending: PendingWork;
    orchestrator: OrchestratorConfig;
  },
): AttemptDeps {
  const o = run.orchestrator;
  return {
    env: parts.env,
    policy: parts.policy,
    rewards: parts.rewards,
    names: parts.names,
    bus: run.bus,
    log: run.log,
    signal: run.signal,
    pending: run.pending,
    maxTurns: o.max_turns,
    timeouts: o.timeouts,
    retries: o.rollout_retries,
    policyVersion: () => parts.policy.version,
  };
}

export interface AttemptInput {
  rolloutId: string;
  example: Example;
  groupId: string;
  step: number;
  split: "train" | "eval";
}

/**
 * One rollout with retries: runs it, scores it with every reward entry and emits rollout:start / rollout:end.
 * A rollout whose env, policy or reward still fails after `retries` retries comes back as a failed trajectory
 * (stopReason "failed", the last error kept) instead of throwing.
 */
export async function rolloutWithRetries(deps: AttemptDeps, input: AttemptInput): Promise<Trajectory> {
  const { bus, log, signal } = deps;
  const { rolloutId, example, groupId, step, split } = input;
  let lastError = "";
  for (let attempt = 0; attempt <= deps.retries && !signal.aborted; attempt++) {
    await bus.emit("rollout:start", {
      rolloutId,
      exampleId: example.id,
      task: example.task,
      groupId,
      step,
      policyVersion: deps.policyVersion(),
      attempt,
      split,
    });
    try {
      const trajectory = await runRollout(deps, { rolloutId, example, groupId, step });
      trajectory.metrics.attempts = attempt + 1;
      trajectory.split = split;
      await applyRewards(trajectory, deps.rewards, deps.pending, deps.timeouts.reward_ms).catch((error) => {
        throw new AirError("HOOK_FAILED", errorMessage(error), {
          plugin: "reward",
          hook: "score",
          cause: error,
        });
      });
      await bus.emit("rollout:end", { trajectory });
      return trajectory;
    } catch (error) {
      lastError = errorMessage(error);
      log.warn(`rollout ${rolloutId} (${example.id}) attempt ${attempt + 1} failed: ${lastError}`);
    }
  }
  const failed = failedTrajectory(input, signal.aborted ? "aborted" : lastError);
  await bus.emit("rollout:end", { trajectory: failed });
  return failed;
}

function failedTrajectory(input: AttemptInput, error: string): Trajectory {
  const now = Date.now();
  return {
    schemaVersion: SCHEMA_VERSION,
    id: input.rolloutId,
    exampleId: input.example.id,
    task: input.example.task,
    groupId: input.groupId,
    step: input.step,
    split: input.split,
    policyVersions: [],
    initialMessages: [],
    turns: [],
    stopReason: "failed",
    error,
    score: input.example.score,
    metrics: {},
    timing: { startMs: now, endMs: now },
  };
}
