import {
  type Example,
  type Message,
  SCHEMA_VERSION,
  type StopReason,
  type Trajectory,
  type Turn,
} from "../types.ts";

/** A JSON value (what an env records to continue a rollout; stored as text). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * What an env session records at a turn's end to continue from there in another process (`rl --resume`):
 * plain JSON, e.g. env-mlgym's sandbox snapshot handle, open file, window, step count and best score so far.
 */
export type EnvState = { [key: string]: JsonValue };

/** Recorded beside a turn (`turn:end`): the session's state after it and whether the env ended the episode there. */
export interface ResumePoint {
  state: EnvState;
  done: boolean;
  /** On the first turn's point only: the messages the env's `start()` gave (the stored turns hold the rest). */
  initialMessages?: Message[];
}

/**
 * A rollout of a resumed step that the run store recorded with a resume point on its last turn (what a logger's
 * `recordedRollouts()` returns on `rl --resume`): its turns exactly as stored (token ids, logprobs, versions,
 * prompts) and the point to continue from.
 */
export interface RecordedRollout {
  rolloutId: string;
  step: number;
  groupId: string;
  exampleId: string;
  initialMessages: Message[];
  turns: Turn[];
  point: ResumePoint;
  startMs: number;
  /** A tree node's parent link (`Trajectory.parent`; tree rollouts, `[orchestrator.tree]`). */
  parent?: Trajectory["parent"];
  /**
   * Set when the rollout had ended before the kill (its step not yet trained): it is taken as recorded — its last
   * turn holds the auto-submit's result too — rescored, and no env is opened for it. "branched": a tree node that
   * forked into children (loop/tree-resume.ts).
   */
  stopReason?: StopReason;
}

/**
 * A recorded rollout that had ended, as the trajectory it was (rewards to be applied again).
 * @example const t = endedTrajectory(recorded, example);
 */
export function endedTrajectory(recorded: RecordedRollout, example: Example): Trajectory {
  return {
    schemaVersion: SCHEMA_VERSION,
    id: recorded.rolloutId,
    exampleId: example.id,
    task: example.task,
    groupId: recorded.groupId,
    step: recorded.step,
    policyVersions: versionsOf(recorded.turns),
    initialMessages: recorded.initialMessages,
    turns: [...recorded.turns],
    stopReason: recorded.stopReason ?? "done",
    score: example.score,
    metrics: {},
    timing: { startMs: recorded.startMs, endMs: Date.now() },
  };
}

/**
 * The conversation the policy saw after the recorded turns: the initial messages, then each turn's reply and
 * observation (as `playTurn` appends them).
 * @example const messages = resumedMessages(recorded); // [...initialMessages, assistant, user, …]
 */
export function resumedMessages(recorded: Pick<RecordedRollout, "initialMessages" | "turns">): Message[] {
  const messages = recorded.initialMessages.map((m) => ({ ...m }));
  for (const turn of recorded.turns) {
    messages.push({ role: "assistant", content: turn.completionText });
    messages.push({ role: "user", content: turn.observation });
  }
  return messages;
}

/** The policy versions of `turns` in first-seen order (a trajectory's `policyVersions`). */
export function versionsOf(turns: Turn[]): Trajectory["policyVersions"] {
  const out: number[] = [];
  for (const t of turns) if (!out.includes(t.policyVersion)) out.push(t.policyVersion);
  return out;
}
