import { definePlugin, type Sample, type SampleResult, type Trajectory } from "@air/core";
import { type StrategyConfig, strategyConfigSchema } from "./options.ts";
import { emptyCounts, fitToSeqLen, SampleDraft, type StrategyCounts, usableTurn } from "./sample.ts";

/** True when `prefix` is a prefix of `tokens`. @example extendsPrefix([1, 2, 3], [1, 2]) // true */
export function extendsPrefix(tokens: ArrayLike<number>, prefix: ArrayLike<number>): boolean {
  if (prefix.length > tokens.length) return false;
  for (let i = 0; i < prefix.length; i++) if (tokens[i] !== prefix[i]) return false;
  return true;
}

/**
 * One sequence per trajectory: turn k's prompt must start with everything the sequence holds so far
 * (previous prompt + completion); its new tokens (the environment's observation, chat-template glue) are
 * added masked out, then its completion masked in. A turn whose prompt does not extend the sequence
 * (the template re-rendered history, e.g. dropped reasoning) starts a new sample: a prefix break. A change of
 * sampling temperature also starts a new sample, since a sample has one temperature.
 * @example
 * const { samples, metrics } = interleavedSamples(trajectory, { overlong: "drop" });
 * metrics.prefix_breaks; // 0 when the server's rendering kept the prefix property
 */
export function interleavedSamples(trajectory: Trajectory, config: StrategyConfig): SampleResult {
  const counts = emptyCounts();
  const samples: Sample[] = [];
  let draft: SampleDraft | undefined;
  const close = () => {
    if (!draft?.hasCompletion) return;
    const fitted = fitToSeqLen(draft.toSample(trajectory), config, counts);
    if (fitted) samples.push(fitted);
  };
  for (const [position, turn] of trajectory.turns.entries()) {
    if (!usableTurn(turn, counts)) continue;
    if (draft && !continues(draft, turn.promptTokenIds, turn.temperature, counts)) {
      close();
      draft = undefined;
    }
    if (!draft) {
      draft = new SampleDraft(turn.temperature);
      draft.addContext(turn.promptTokenIds);
    } else {
      draft.addContext(turn.promptTokenIds.slice(draft.tokenIds.length));
    }
    draft.addCompletion(position, turn);
  }
  close();
  counts.samples = samples.length;
  return { samples, metrics: { ...counts } };
}

function continues(
  draft: SampleDraft,
  prompt: ArrayLike<number>,
  temperature: number,
  counts: StrategyCounts,
): boolean {
  if (!extendsPrefix(prompt, draft.tokenIds)) {
    counts.prefix_breaks++;
    return false;
  }
  if (temperature !== draft.temperature) {
    counts.temperature_breaks++;
    return false;
  }
  return true;
}

/**
 * The `interleaved` strategy: one sequence per trajectory while the prefix property holds.
 * @example
 * // [strategy]
 * // plugin = "interleaved"
 * // seq_len = 16384
 * // overlong = "drop"
 */
export const interleaved = definePlugin({
  name: "interleaved",
  kind: "strategy",
  description: "one sequence per trajectory, env tokens masked out; a prefix break starts a new sample",
  configSchema: strategyConfigSchema,
  create: (config) => ({ toSamples: (trajectory) => interleavedSamples(trajectory, config) }),
});
