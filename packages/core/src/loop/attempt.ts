import type { OrchestratorConfig } from "../config/schema.ts";
import { AirError, errorMessage } from "../errors.ts";
import type { EventBus } from "../events.ts";
import type { Logger } from "../log.ts";
import type { PendingWork } from "../pending.ts";
import type { Environment, EnvSession, Policy } from "../plugin.ts";
import { type Example, SCHEMA_VERSION, type Trajectory } from "../types.ts";
import { endedTrajectory, type RecordedRollout } from "./resume.ts";
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
  /** A rollout the store recorded (`rl --resume`): its first attempt continues from its last resume point. */
  recorded?: RecordedRollout;
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
    // a recorded rollout that had ended is taken as it was; one in flight continues in a restored session
    const ended = attempt === 0 && input.recorded?.stopReason !== undefined ? input.recorded : undefined;
    const resume =
      attempt === 0 && input.recorded && !ended
        ? await restoreSession(deps, input, input.recorded)
        : undefined;
    const recorded = ended ?? resume?.recorded;
    await bus.emit("rollout:start", {
      rolloutId,
      exampleId: example.id,
      task: example.task,
      groupId,
      step,
      policyVersion: deps.policyVersion(),
      attempt,
      split,
      ...(recorded ? { resumedAt: recorded.turns.length } : {}),
    });
    try {
      const trajectory = ended
        ? endedTrajectory(ended, example)
        : await runRollout(deps, { rolloutId, example, groupId, step, resume });
      trajectory.metrics.attempts = attempt + 1;
      // the dashboard marks a rollout continued after `rl --resume` and where
      if (recorded) trajectory.metrics["resume/turn"] = recorded.turns.length;
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
      // the run is stopping (its signal aborted every rollout in flight): not a failure worth a warning each
      const say = signal.aborted ? log.debug.bind(log) : log.warn.bind(log);
      say(`rollout ${rolloutId} (${example.id}) attempt ${attempt + 1} failed: ${lastError}`);
    }
  }
  const failed = failedTrajectory(input, signal.aborted ? "aborted" : lastError);
  await bus.emit("rollout:end", { trajectory: failed });
  return failed;
}

/**
 * The env's session in `recorded`'s last state (`Environment.restore`), or undefined — with a warning naming the
 * rollout and why — when the env cannot restore it (no `restore`, a snapshot gone or unreadable): it starts over.
 */
async function restoreSession(
  deps: AttemptDeps,
  input: AttemptInput,
  recorded: RecordedRollout,
): Promise<{ session: EnvSession; recorded: RecordedRollout } | undefined> {
  const { env, names } = deps;
  const why = !env.restore
    ? `the ${names.env} env cannot restore sessions`
    : await deps.pending
        .run(
          `${names.env}.restore ${input.rolloutId}`,
          deps.timeouts.env_open_ms,
          () =>
            env.restore!(input.example, {
              rolloutId: input.rolloutId,
              signal: deps.signal,
              state: recorded.point.state,
            }),
          { plugin: names.env, hook: "restore" },
        )
        .then((session) => ({ session }), errorMessage);
  if (typeof why === "object") return { session: why.session, recorded };
  deps.log.warn(
    `rollout ${input.rolloutId} (${input.example.id}) starts over: its state after turn ${recorded.turns.length - 1} cannot be restored (${why})`,
  );
  return undefined;
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
