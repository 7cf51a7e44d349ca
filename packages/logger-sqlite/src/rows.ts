import type { ResumePoint, Sample, Trajectory, Turn } from "@air/core";
import { logprobMean, promptBase, summarizeTrajectory, tailFromPrevious } from "./summary.ts";

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

/**
 * The columns of a turn that can change after turn:end (rewards are applied at rollout end; the env's
 * auto-submit adds scores and info to the last turn), keyed for the narrow UPDATE at rollout:end.
 */
export function turnOutcomeRow(runId: number, rolloutId: string, turn: Turn) {
  return {
    runId,
    rolloutId,
    idx: turn.index,
    reward: turn.reward ?? null,
    rewardBreakdownJson: json(turn.rewardBreakdown),
    scoresJson: json(turn.scores),
    stepKind: turn.stepKind ?? null,
    evaluationError: turn.evaluationError ?? null,
    infoJson: json(turn.info),
  };
}

/**
 * The `turns` row of one turn; `previous` is the turn before it. Only the prompt's messages after the previous
 * prompt are kept, and not even those when they are the previous turn's reply and observation.
 */
export function turnRow(runId: number, rolloutId: string, turn: Turn, previous: Turn | undefined) {
  // Read once: a turn's promptMessages may be a view that builds its list on each read.
  const prompt = turn.promptMessages;
  const base = promptBase(previous?.promptMessages, prompt);
  const tail = prompt.slice(base);
  const fromPrevious = tailFromPrevious(tail, previous);
  return {
    ...turnOutcomeRow(runId, rolloutId, turn),
    promptMessagesJson: fromPrevious ? "[]" : JSON.stringify(tail),
    promptBase: base,
    promptFromPrevious: fromPrevious,
    completion: turn.completionText,
    command: turn.action.command ?? null,
    parseError: turn.parseError ?? turn.action.parseError ?? null,
    toolError: turn.toolError ?? null,
    observation: turn.observation,
    finishReason: turn.finishReason,
    policyVersion: turn.policyVersion,
    temperature: turn.temperature,
    promptTokens: turn.promptTokenIds.length,
    completionTokens: turn.completionTokenIds.length,
    logprobMean: logprobMean(turn),
    generateMs: turn.timing.generateMs,
    envMs: turn.timing.envMs,
    notesJson: json(turn.action.notes),
  };
}

/** Little-endian bytes of int32 token ids or float32 logprobs (what `turn_resume` stores). */
function int32Bytes(values: ArrayLike<number>): Buffer {
  const out = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i++) out.writeInt32LE(values[i] as number, i * 4);
  return out;
}

function float32Bytes(values: ArrayLike<number>): Buffer {
  const out = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i++) out.writeFloatLE(values[i] as number, i * 4);
  return out;
}

/** How many leading prompt ids of `turn` are `previous`'s prompt and completion ids (0 when they are not a prefix). */
function promptIdsBase(turn: Turn, previous: Turn | undefined): number {
  if (!previous) return 0;
  const a = previous.promptTokenIds;
  const b = previous.completionTokenIds;
  const p = turn.promptTokenIds;
  if (a.length + b.length > p.length) return 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== p[i]) return 0;
  for (let i = 0; i < b.length; i++) if (b[i] !== p[a.length + i]) return 0;
  return a.length + b.length;
}

/**
 * The `turn_resume` row of a turn with a resume point: its token ids (the prompt's after those it shares with the
 * previous turn's prompt and completion), logprobs, completion mask (llama.cpp's tokens without a logprob) and the
 * env's point.
 */
export function turnResumeRow(
  runId: number,
  rolloutId: string,
  turn: Turn,
  previous: Turn | undefined,
  point: ResumePoint,
) {
  const base = promptIdsBase(turn, previous);
  return {
    runId,
    rolloutId,
    idx: turn.index,
    promptIdsBase: base,
    promptIds: int32Bytes(turn.promptTokenIds.slice(base)),
    completionIds: int32Bytes(turn.completionTokenIds),
    logprobs: float32Bytes(turn.completionLogprobs),
    completionMask: turn.completionMask ? Buffer.from(Uint8Array.from(turn.completionMask)) : null,
    pointJson: JSON.stringify(point),
  };
}

/** The `trajectories` row of a finished trajectory (without the autoincrement id). */
export function trajectoryRow(runId: number, t: Trajectory, attempt: number) {
  const s = summarizeTrajectory(t);
  return {
    runId,
    rolloutId: t.id,
    step: t.step,
    exampleId: t.exampleId,
    task: t.task,
    groupId: t.groupId,
    split: t.split ?? "train",
    attempt,
    status: t.stopReason === "failed" ? "failed" : "done",
    stopReason: t.stopReason,
    error: t.error ?? null,
    reward: t.reward ?? null,
    rewardBreakdownJson: json(t.rewardBreakdown),
    policyVersionsJson: JSON.stringify(t.policyVersions),
    priorityMetric: s.priorityMetric,
    baselineScore: s.baselineScore,
    finalScore: s.finalScore,
    improvement: s.improvement,
    validationHistoryJson: JSON.stringify(s.validationHistory),
    validated: s.validated,
    turnCount: t.turns.length,
    promptTokens: t.turns.reduce((a, x) => a + x.promptTokenIds.length, 0),
    completionTokens: t.turns.reduce((a, x) => a + x.completionTokenIds.length, 0),
    initialMessagesJson: JSON.stringify(t.initialMessages),
    metricsJson: JSON.stringify(t.metrics),
    scoreSpecJson: json(t.score),
    parentJson: json(t.parent),
    infoJson: null,
    startedAt: t.timing.startMs,
    endedAt: t.timing.endMs,
  };
}

/** The `samples` row of one training sample: sizes and advantage summary, not the token arrays. */
export function sampleRow(runId: number, step: number, s: Sample) {
  let sum = 0;
  let n = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < s.tokenIds.length; i++) {
    if (!s.lossMask[i]) continue;
    const a = s.advantages[i] ?? 0;
    sum += a;
    n++;
    if (a < min) min = a;
    if (a > max) max = a;
  }
  return {
    runId,
    step,
    rolloutId: s.trajectoryId,
    groupId: s.groupId,
    tokens: s.tokenIds.length,
    lossTokens: n,
    advantageMean: n ? sum / n : 0,
    advantageMin: n ? min : 0,
    advantageMax: n ? max : 0,
    policyVersion: s.policyVersion,
    truncatedTokens: s.truncatedTokens,
  };
}
