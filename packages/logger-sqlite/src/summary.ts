import type { Message, Trajectory, Turn } from "@air/core";

/** One scored step (validate or submit) of a trajectory. */
export interface ValidationPoint {
  turn: number;
  score: number;
  kind?: string;
}

export interface TrajectorySummary {
  priorityMetric: string | null;
  baselineScore: number | null;
  finalScore: number | null;
  /** final − baseline for a maximized metric, baseline − final for a minimized one. */
  improvement: number | null;
  validationHistory: ValidationPoint[];
  validated: boolean;
}

/**
 * Baseline, final score, improvement and validation history of a trajectory, following the task's priority
 * metric (or the first metric a turn reported when the task names none).
 * @example const { finalScore, improvement } = summarizeTrajectory(trajectory);
 */
export function summarizeTrajectory(trajectory: Trajectory): TrajectorySummary {
  const scored = trajectory.turns.filter((t) => t.scores && Object.keys(t.scores).length > 0);
  const metric = trajectory.score?.priorityMetric ?? (scored[0] ? Object.keys(scored[0].scores!)[0]! : null);
  const baseline = metric === null ? undefined : trajectory.score?.baseline?.[metric];
  const history: ValidationPoint[] = [];
  for (const t of scored) {
    const value = metric === null ? undefined : t.scores![metric];
    if (typeof value === "number" && Number.isFinite(value))
      history.push({ turn: t.index, score: value, kind: t.stepKind });
  }
  const final = history.at(-1)?.score ?? null;
  const minimize = metric !== null && trajectory.score?.directions[metric] === "minimize";
  const improvement =
    final === null || baseline === undefined ? null : minimize ? baseline - final : final - baseline;
  return {
    priorityMetric: metric,
    baselineScore: baseline ?? null,
    finalScore: final,
    improvement,
    validationHistory: history,
    validated: scored.length > 0,
  };
}

function sameMessage(a: Message, b: Message): boolean {
  return a.role === b.role && a.content === b.content;
}

/**
 * How many leading messages of `prompt` equal `previous` (all of it, or 0 when it is not a prefix).
 * Turns store only the messages after that base, so a 10-turn history is not stored ten times.
 * @example promptBase([sys, user], [sys, user, reply, observation]) // → 2
 */
export function promptBase(previous: Message[] | undefined, prompt: Message[]): number {
  if (!previous || previous.length > prompt.length) return 0;
  for (let i = 0; i < previous.length; i++) if (!sameMessage(previous[i]!, prompt[i]!)) return 0;
  return previous.length;
}

/** One stored turn's prompt: its base, its stored tail, and what a `fromPrevious` tail is rebuilt from. */
export interface StoredPrompt {
  promptBase: number;
  promptMessages: Message[];
  /** The tail is the previous turn's reply and observation (not stored again). */
  fromPrevious?: boolean;
  /** This turn's reply and observation: the next turn's tail when that one is `fromPrevious`. */
  completion?: string;
  observation?: string;
}

/**
 * Whether `tail` (a prompt's messages after its base) is exactly the previous turn's reply and observation,
 * as core appends them; such a tail is stored as a reference instead of a second copy.
 * @example tailFromPrevious([{ role: "assistant", content: "ls" }, { role: "user", content: "a.txt" }], prev) // → true
 */
export function tailFromPrevious(
  tail: Message[],
  previous: { completionText: string; observation: string } | undefined,
): boolean {
  const [reply, observation] = tail;
  if (!previous || !reply || !observation || tail.length !== 2) return false;
  return (
    reply.role === "assistant" &&
    reply.content === previous.completionText &&
    observation.role === "user" &&
    observation.content === previous.observation &&
    Object.keys(reply).length === 2 &&
    Object.keys(observation).length === 2
  );
}

/**
 * Rebuilds each turn's full prompt from stored (base, tail) pairs, in turn order.
 * @example rebuildPrompts([{ promptBase: 0, promptMessages: [sys, user] }, { promptBase: 2, promptMessages: [reply, obs] }])
 */
export function rebuildPrompts(stored: StoredPrompt[]): Message[][] {
  const out: Message[][] = [];
  let previous: Message[] = [];
  let before: StoredPrompt | undefined;
  for (const s of stored) {
    const tail: Message[] = s.fromPrevious
      ? [
          { role: "assistant", content: before?.completion ?? "" },
          { role: "user", content: before?.observation ?? "" },
        ]
      : s.promptMessages;
    const full = [...previous.slice(0, s.promptBase), ...tail];
    out.push(full);
    previous = full;
    before = s;
  }
  return out;
}

/**
 * Mean of a turn's completion logprobs, leaving out the tokens its `completionMask` marks 0 (llama.cpp gave them
 * no logprob; their stored 0 is not one). Null without any.
 */
export function logprobMean(turn: Turn): number | null {
  const lp = turn.completionLogprobs;
  const mask = turn.completionMask;
  let sum = 0;
  let n = 0;
  for (let i = 0; i < (lp?.length ?? 0); i++) {
    if (mask?.[i] === 0) continue;
    sum += lp[i] as number;
    n++;
  }
  return n === 0 ? null : sum / n;
}
