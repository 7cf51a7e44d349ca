import type { Sample, Trajectory, Turn } from "@air/core";
import type { StrategyConfig } from "./options.ts";

/**
 * Counters every strategy reports; core sums them over the step's trajectories as `strategy/<key>`.
 * @example const counts: StrategyCounts = emptyCounts();
 */
export interface StrategyCounts {
  samples: number;
  /** Turns not trained on because their logprobs do not align with their completion tokens. */
  misaligned_turns: number;
  /** Turns with no completion tokens. */
  empty_turns: number;
  /** Completion tokens the server gave no logprob for (`Turn.completionMask` 0): left out of the loss. */
  tokens_without_logprob: number;
  prefix_breaks: number;
  temperature_breaks: number;
  truncated_samples: number;
  truncated_tokens: number;
  overlong_dropped: number;
  /** Model-generated tokens lost to truncation or dropping. */
  overlong_lost_loss_tokens: number;
}

/** All counters at 0. @example const counts = emptyCounts(); */
export function emptyCounts(): StrategyCounts {
  return {
    samples: 0,
    misaligned_turns: 0,
    empty_turns: 0,
    tokens_without_logprob: 0,
    prefix_breaks: 0,
    temperature_breaks: 0,
    truncated_samples: 0,
    truncated_tokens: 0,
    overlong_dropped: 0,
    overlong_lost_loss_tokens: 0,
  };
}

/** A sample under construction. */
export class SampleDraft {
  readonly tokenIds: number[] = [];
  readonly lossMask: number[] = [];
  readonly logprobs: number[] = [];
  readonly spans: Sample["spans"] = [];
  private oldestVersion = Number.POSITIVE_INFINITY;

  constructor(readonly temperature: number) {}

  /** Prompt or environment tokens: not trained on. */
  addContext(tokens: ArrayLike<number> & Iterable<number>): void {
    for (const t of tokens) {
      this.tokenIds.push(t);
      this.lossMask.push(0);
      this.logprobs.push(0);
    }
  }

  /** A turn's completion: trained on, with its inference logprobs (a token without one: loss mask 0). */
  addCompletion(turnPosition: number, turn: Turn): void {
    const start = this.tokenIds.length;
    const mask = turn.completionMask;
    for (const [i, t] of turn.completionTokenIds.entries()) {
      const trained = mask === undefined || mask[i] !== 0;
      this.tokenIds.push(t);
      this.lossMask.push(trained ? 1 : 0);
      this.logprobs.push(trained ? (turn.completionLogprobs[i] ?? 0) : 0);
    }
    this.spans.push({ turn: turnPosition, start, end: this.tokenIds.length });
    this.oldestVersion = Math.min(this.oldestVersion, turn.policyVersion);
  }

  get hasCompletion(): boolean {
    return this.spans.length > 0;
  }

  toSample(trajectory: Trajectory): Sample {
    return {
      trajectoryId: trajectory.id,
      groupId: trajectory.groupId,
      tokenIds: this.tokenIds,
      lossMask: this.lossMask,
      logprobs: this.logprobs,
      advantages: new Array<number>(this.tokenIds.length).fill(0),
      spans: this.spans,
      temperature: this.temperature,
      policyVersion: Number.isFinite(this.oldestVersion) ? this.oldestVersion : 0,
      truncatedTokens: 0,
    };
  }
}

/** Whether a turn can be trained on; counts the reason when not. */
export function usableTurn(turn: Turn, counts: StrategyCounts): boolean {
  if (turn.completionTokenIds.length === 0) {
    counts.empty_turns++;
    return false;
  }
  const mask = turn.completionMask;
  if (
    turn.completionLogprobs.length !== turn.completionTokenIds.length ||
    (mask !== undefined && mask.length !== turn.completionTokenIds.length)
  ) {
    counts.misaligned_turns++;
    return false;
  }
  if (mask === undefined) return true;
  const without = mask.filter((m) => m === 0).length;
  counts.tokens_without_logprob += without;
  return without < mask.length;
}

/**
 * Applies `seq_len`: a longer sample loses its tail (`truncate`) or is dropped (`drop`); a sample truncated
 * to no model-generated token is dropped too. Returns undefined for a dropped sample.
 * @example
 * const counts = emptyCounts();
 * const fitted = fitToSeqLen(sample, { seq_len: 4096, overlong: "truncate" }, counts);
 */
export function fitToSeqLen(
  sample: Sample,
  config: StrategyConfig,
  counts: StrategyCounts,
): Sample | undefined {
  const limit = config.seq_len;
  if (limit === undefined || sample.tokenIds.length <= limit) return sample;
  const lossTokens = sum(sample.lossMask);
  const keptLoss = sum(sample.lossMask.slice(0, limit));
  if (config.overlong === "drop" || keptLoss === 0) {
    counts.overlong_dropped++;
    counts.overlong_lost_loss_tokens += lossTokens;
    return undefined;
  }
  const cut = sample.tokenIds.length - limit;
  counts.truncated_samples++;
  counts.truncated_tokens += cut;
  counts.overlong_lost_loss_tokens += lossTokens - keptLoss;
  return {
    ...sample,
    tokenIds: sample.tokenIds.slice(0, limit),
    lossMask: sample.lossMask.slice(0, limit),
    logprobs: sample.logprobs.slice(0, limit),
    advantages: sample.advantages.slice(0, limit),
    spans: sample.spans.filter((s) => s.start < limit).map((s) => ({ ...s, end: Math.min(s.end, limit) })),
    truncatedTokens: cut,
  };
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
