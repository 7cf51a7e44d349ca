import { describe, expect, test } from "bun:test";
import type { Sample, Trajectory } from "@air/core";
import { TokenLog } from "@air/core";
import { makeTrajectory, makeTurn, seededRandom } from "@air/core/testing";
import { expectTypeOf } from "expect-type";
import { branching, branchingSamples } from "./branching.ts";
import { interleaved, interleavedSamples } from "./interleaved.ts";
import { STRATEGY_DEFAULTS, type StrategyConfig } from "./options.ts";

interface TurnShape {
  prompt: number[];
  completion: number[];
  logprobs?: number[];
  version?: number;
  temperature?: number;
}

function trajectory(shapes: TurnShape[]): Trajectory {
  const turns = shapes.map((s, index) =>
    makeTurn({
      index,
      promptTokenIds: s.prompt,
      completionTokenIds: s.completion,
      completionLogprobs: s.logprobs ?? s.completion.map((t) => -t / 1000),
      policyVersion: s.version ?? 0,
      temperature: s.temperature ?? 1,
    }),
  );
  return makeTrajectory({ id: "traj", turns });
}

/** A multi-turn conversation whose prompts extend the previous prompt + completion, except at `breaks`. */
function conversation(random: () => number, breakProb: number): { shapes: TurnShape[]; breaks: number } {
  const tokens = (n: number) => Array.from({ length: n }, () => 1 + Math.floor(random() * 5000));
  const shapes: TurnShape[] = [];
  let prompt = tokens(1 + Math.floor(random() * 20));
  let breaks = 0;
  const turnCount = 1 + Math.floor(random() * 6);
  for (let k = 0; k < turnCount; k++) {
    const completion = tokens(1 + Math.floor(random() * 15));
    shapes.push({ prompt, completion, version: Math.floor(random() * 3) });
    const extended = [...prompt, ...completion, ...tokens(Math.floor(random() * 10))];
    if (k < turnCount - 1 && random() < breakProb) {
      breaks++;
      extended[Math.floor(random() * (prompt.length + completion.length))] = 9999 + k;
    }
    prompt = extended;
  }
  return { shapes, breaks };
}

const cfg = (over: Partial<StrategyConfig> = {}): StrategyConfig => ({ ...STRATEGY_DEFAULTS, ...over });
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Masks cover exactly the completions named by the spans; logprobs align with the masked tokens. */
function checkAlignment(sample: Sample, t: Trajectory): void {
  const n = sample.tokenIds.length;
  expect(sample.lossMask).toHaveLength(n);
  expect(sample.logprobs).toHaveLength(n);
  expect(sample.advantages).toHaveLength(n);
  const inSpan = new Array<number>(n).fill(0);
  let previousEnd = 0;
  for (const span of sample.spans) {
    expect(span.start).toBeGreaterThanOrEqual(previousEnd);
    previousEnd = span.end;
    const turn = t.turns[span.turn]!;
    const length = span.end - span.start;
    expect(sample.tokenIds.slice(span.start, span.end)).toEqual(
      Array.from(turn.completionTokenIds.slice(0, length)),
    );
    expect(sample.logprobs.slice(span.start, span.end)).toEqual(
      Array.from(turn.completionLogprobs.slice(0, length)),
    );
    for (let i = span.start; i < span.end; i++) inSpan[i] = 1;
  }
  expect(sample.lossMask).toEqual(inSpan);
  for (let i = 0; i < n; i++) if (!sample.lossMask[i]) expect(sample.logprobs[i]).toBe(0);
}

describe("branching", () => {
  test("property: one sample per turn, prompt + completion, loss on the completion only", () => {
    const random = seededRandom(1);
    for (let k = 0; k < 300; k++) {
      const t = trajectory(conversation(random, 0.3).shapes);
      const { samples, metrics } = branchingSamples(t, cfg());
      expect(samples).toHaveLength(t.turns.length);
      expect(metrics?.samples).toBe(t.turns.length);
      for (const [i, s] of samples.entries()) {
        const turn = t.turns[i]!;
        checkAlignment(s, t);
        expect(s.tokenIds).toEqual([...turn.promptTokenIds, ...turn.completionTokenIds]);
        expect(s.spans).toEqual([{ turn: i, start: turn.promptTokenIds.length, end: s.tokenIds.length }]);
        expect(s.policyVersion).toBe(turn.policyVersion);
        expect(s.truncatedTokens).toBe(0);
      }
      const tokens = sum(t.turns.map((x) => x.promptTokenIds.length + x.completionTokenIds.length));
      expect(sum(samples.map((s) => s.tokenIds.length))).toBe(tokens);
      const generated = sum(t.turns.map((x) => x.completionTokenIds.length));
      expect(sum(samples.map((s) => sum(s.lossMask)))).toBe(generated);
    }
  });

  test("empty and misaligned turns are skipped and counted", () => {
    const t = trajectory([
      { prompt: [1, 2], completion: [] },
      { prompt: [1, 2, 3], completion: [4, 5], logprobs: [-1] },
      { prompt: [1, 2, 3, 4, 5, 6], completion: [7] },
    ]);
    for (const run of [branchingSamples, interleavedSamples]) {
      const { samples, metrics } = run(t, cfg());
      expect(metrics).toMatchObject({ empty_turns: 1, misaligned_turns: 1, samples: 1 });
      expect(samples[0]!.spans).toEqual([{ turn: 2, start: 6, end: 7 }]);
    }
  });

  test("a token without a logprob (completionMask 0) is out of the loss and counted; the rest trains", () => {
    const t = trajectory([
      { prompt: [1, 2], completion: [3, 4, 5], logprobs: [-0.1, 0, -0.3] },
      { prompt: [1, 2, 3, 4, 5, 6], completion: [7, 8], logprobs: [0, 0] },
    ]);
    t.turns[0]!.completionMask = [1, 0, 1];
    t.turns[1]!.completionMask = [0, 0];
    for (const run of [branchingSamples, interleavedSamples]) {
      const { samples, metrics } = run(t, cfg());
      // The second turn has no token with a logprob: nothing of it trains.
      expect(metrics).toMatchObject({ tokens_without_logprob: 3, samples: 1 });
      expect(samples[0]!.lossMask).toEqual([0, 0, 1, 0, 1]);
      expect(samples[0]!.logprobs.map((l) => Math.fround(l))).toEqual([
        0,
        0,
        Math.fround(-0.1),
        0,
        Math.fround(-0.3),
      ]);
    }
  });
});

describe("interleaved", () => {
  test("property: without prefix breaks, one sequence = last prompt + last completion", () => {
    const random = seededRandom(2);
    for (let k = 0; k < 300; k++) {
      const t = trajectory(conversation(random, 0).shapes);
      const { samples, metrics } = interleavedSamples(t, cfg());
      expect(samples).toHaveLength(1);
      expect(metrics?.prefix_breaks).toBe(0);
      const s = samples[0]!;
      checkAlignment(s, t);
      const last = t.turns.at(-1)!;
      expect(s.tokenIds).toEqual([...last.promptTokenIds, ...last.completionTokenIds]);
      expect(sum(s.lossMask)).toBe(sum(t.turns.map((x) => x.completionTokenIds.length)));
      expect(s.spans.map((x) => x.turn)).toEqual(t.turns.map((_, i) => i));
      expect(s.policyVersion).toBe(Math.min(...t.turns.map((x) => x.policyVersion)));
    }
  });

  test("property: a prefix break starts a new sample and is counted; every completion is trained once", () => {
    const random = seededRandom(4);
    let sawBreak = false;
    for (let k = 0; k < 300; k++) {
      const { shapes, breaks } = conversation(random, 0.4);
      const t = trajectory(shapes);
      const { samples, metrics } = interleavedSamples(t, cfg());
      sawBreak ||= breaks > 0;
      expect(metrics?.prefix_breaks).toBe(breaks);
      expect(samples).toHaveLength(breaks + 1);
      for (const s of samples) checkAlignment(s, t);
      expect(samples.flatMap((s) => s.spans.map((x) => x.turn))).toEqual(t.turns.map((_, i) => i));
      expect(sum(samples.map((s) => sum(s.lossMask)))).toBe(
        sum(t.turns.map((x) => x.completionTokenIds.length)),
      );
    }
    expect(sawBreak).toBe(true);
  });

  test("a change of temperature starts a new sample", () => {
    const t = trajectory([
      { prompt: [1], completion: [2], temperature: 1 },
      { prompt: [1, 2, 3], completion: [4], temperature: 0.7 },
    ]);
    const { samples, metrics } = interleavedSamples(t, cfg());
    expect(samples.map((s) => s.temperature)).toEqual([1, 0.7]);
    expect(metrics).toMatchObject({ prefix_breaks: 0, temperature_breaks: 1 });
  });
});

describe("seq_len", () => {
  test("property: truncate cuts the tail, drop drops the sample; both are counted", () => {
    const random = seededRandom(9);
    for (let k = 0; k < 200; k++) {
      const t = trajectory(conversation(random, 0.2).shapes);
      const seqLen = 5 + Math.floor(random() * 60);
      for (const run of [branchingSamples, interleavedSamples]) {
        const free = run(t, cfg()).samples;
        const cut = run(t, cfg({ seq_len: seqLen }));
        const dropped = run(t, cfg({ seq_len: seqLen, overlong: "drop" }));
        const over = free.filter((s) => s.tokenIds.length > seqLen);
        const keepable = over.filter((s) => sum(s.lossMask.slice(0, seqLen)) > 0);
        expect(dropped.samples).toHaveLength(free.length - over.length);
        expect(dropped.metrics?.overlong_dropped).toBe(over.length);
        expect(cut.samples).toHaveLength(free.length - over.length + keepable.length);
        expect(cut.metrics?.truncated_samples).toBe(keepable.length);
        expect(cut.metrics?.truncated_tokens).toBe(sum(keepable.map((s) => s.tokenIds.length - seqLen)));
        for (const s of [...cut.samples, ...dropped.samples]) {
          expect(s.tokenIds.length).toBeLessThanOrEqual(seqLen);
          checkAlignment(s, t);
        }
        for (const s of cut.samples) {
          const original = free.find((f) => f.spans[0]!.turn === s.spans[0]!.turn)!;
          expect(s.truncatedTokens).toBe(original.tokenIds.length - s.tokenIds.length);
          expect(s.tokenIds).toEqual(original.tokenIds.slice(0, s.tokenIds.length));
        }
      }
    }
  });
});

describe("plugins", () => {
  test("named exports are strategy plugins with the documented defaults", () => {
    expect(branching).toMatchObject({ name: "branching", kind: "strategy" });
    expect(interleaved).toMatchObject({ name: "interleaved", kind: "strategy" });
    expect(branching.configSchema.parse({})).toEqual({ overlong: "truncate" });
    expect(interleaved.configSchema.safeParse({ overlong: "wrap" }).success).toBe(false);
  });
});

test("definePlugin infers the strategy config type from its schema", () => {
  expectTypeOf<Parameters<typeof branching.create>[0]>().toEqualTypeOf<StrategyConfig>();
  expectTypeOf<Parameters<typeof interleaved.create>[0]>().toEqualTypeOf<StrategyConfig>();
});

describe("a 30-turn trajectory as the loop records it", () => {
  /** 30 turns, prompts growing by 250 tokens plus the previous reply, through core's TokenLog as runRollout does. */
  function longTrajectory(): { t: Trajectory; finalTokens: number } {
    const log = new TokenLog();
    const turns: Trajectory["turns"] = [];
    let sequence = Array.from({ length: 400 }, (_, i) => i);
    for (let index = 0; index < 30; index++) {
      const completion = Array.from({ length: 100 }, (_, i) => 10_000 + index * 100 + i);
      const ids = log.append([...sequence], completion, turns);
      turns.push(
        makeTurn({
          index,
          promptTokenIds: ids.prompt,
          completionTokenIds: ids.completion,
          completionLogprobs: completion.map(() => -0.5),
        }),
      );
      sequence = [...sequence, ...completion, ...Array.from({ length: 250 }, (_, i) => 50_000 + i)];
    }
    const last = turns.at(-1) as Trajectory["turns"][number];
    return { t: makeTrajectory({ id: "long", turns }), finalTokens: last.promptTokenIds.length + 100 };
  }

  test("the turns share one prompt prefix and the interleaved sample holds each token once", () => {
    const { t, finalTokens } = longTrajectory();
    const views = t.turns.flatMap((turn) => [turn.promptTokenIds, turn.completionTokenIds]);
    const held = new Set(views.map((v) => (v as Int32Array).buffer));
    expect(held.size).toBe(1);
    const bytes = [...held].reduce((a, b) => a + b.byteLength, 0);
    expect(bytes).toBeLessThanOrEqual(4 * finalTokens * 1.125 + 1024);
    const sumOfPrompts = t.turns.reduce((a, turn) => a + turn.promptTokenIds.length, 0);
    expect(sumOfPrompts).toBeGreaterThan(10 * finalTokens);

    const { samples, metrics } = interleavedSamples(t, STRATEGY_DEFAULTS);
    expect(samples).toHaveLength(1);
    expect(metrics?.prefix_breaks).toBe(0);
    const sample = samples[0] as Sample;
    expect(sample.tokenIds).toHaveLength(finalTokens);
    expect(sample.lossMask.reduce((a, b) => a + b, 0)).toBe(30 * 100);
    expect(sample.spans).toHaveLength(30);
  });
});
