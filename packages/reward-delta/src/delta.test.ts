import { describe, expect, test } from "bun:test";
import type { ScoreSpec, Trajectory, Turn } from "@air/core";
import { makeTrajectory, makeTurn, seededRandom } from "@air/core/testing";
import { expectTypeOf } from "expect-type";
import { deltaRewards } from "./delta.ts";
import { DELTA_DEFAULTS, type DeltaConfig, deltaConfigSchema } from "./options.ts";
import { deltaReward } from "./plugin.ts";

type TurnSpec = number | null | "error" | Record<string, number>;

function turn(index: number, spec: TurnSpec): Turn {
  const base = makeTurn({ index, completionLogprobs: [-0.1] });
  if (spec === null) return base;
  if (spec === "error") return { ...base, stepKind: "validate", evaluationError: "no submission.csv" };
  const scores = typeof spec === "number" ? { m: spec } : spec;
  return { ...base, stepKind: "validate", scores };
}

function trajectory(turns: TurnSpec[], score?: ScoreSpec): Trajectory {
  return makeTrajectory({ task: "task", turns: turns.map((s, i) => turn(i, s)), score });
}

const maxSpec = (baseline?: number): ScoreSpec => ({
  priorityMetric: "m",
  directions: {},
  baseline: baseline === undefined ? undefined : { m: baseline },
});
const minSpec = (baseline?: number): ScoreSpec => ({
  priorityMetric: "m",
  directions: { m: "minimize" },
  baseline: baseline === undefined ? undefined : { m: baseline },
});
const cfg = (over: Partial<DeltaConfig> = {}): DeltaConfig => ({ ...DELTA_DEFAULTS, ...over });

describe("deltaRewards", () => {
  test("defaults parse from an empty section", () => {
    expect(deltaConfigSchema.parse({})).toEqual(DELTA_DEFAULTS);
    expect(DELTA_DEFAULTS.relative_to).toBe("previous");
    expect(DELTA_DEFAULTS.no_score_reward).toBe(0);
  });

  test("maximize: improvement over the previous score, first previous = baseline", () => {
    const r = deltaRewards(trajectory([null, 0.6, null, 0.55], maxSpec(0.5)), cfg());
    expect(r.turns[0]).toBe(0);
    expect(r.turns[1]).toBeCloseTo(0.1, 12);
    expect(r.turns[2]).toBe(0);
    expect(r.turns[3]).toBeCloseTo(-0.05, 12);
    expect(r.total).toBeCloseTo(0.05, 12);
    expect(r.metrics).toMatchObject({ scored_turns: 2, improved_turns: 1, worsened_turns: 1, no_score: 0 });
  });

  test("minimize: a decrease of rmse is a positive reward, an increase a negative one", () => {
    const r = deltaRewards(trajectory([90, 95], minSpec(100)), cfg());
    expect(r.turns).toEqual([10, -5]);
    expect(r.metrics.final_improvement).toBe(5);
  });

  test("property: a minimize metric rewards every decrease and punishes every increase", () => {
    const random = seededRandom(7);
    for (let k = 0; k < 200; k++) {
      const baseline = random() * 100;
      const scores = Array.from({ length: 1 + Math.floor(random() * 6) }, () => random() * 100);
      const r = deltaRewards(trajectory(scores, minSpec(baseline)), cfg());
      let previous = baseline;
      for (const [i, s] of scores.entries()) {
        expect(Math.sign(r.turns[i]!)).toBe(Math.sign(previous - s));
        previous = s;
      }
    }
  });

  test("property: with relative_to=previous the total telescopes to sign × (final − baseline)", () => {
    const random = seededRandom(11);
    for (let k = 0; k < 300; k++) {
      const minimize = random() < 0.5;
      const baseline = random() * 10 - 5;
      const turns: TurnSpec[] = Array.from({ length: 1 + Math.floor(random() * 8) }, () => {
        const u = random();
        return u < 0.3 ? null : u < 0.4 ? "error" : random() * 10 - 5;
      });
      const r = deltaRewards(trajectory(turns, minimize ? minSpec(baseline) : maxSpec(baseline)), cfg());
      const valid = turns.filter((t): t is number => typeof t === "number");
      const expected = valid.length ? (minimize ? -1 : 1) * (valid.at(-1)! - baseline) : 0;
      expect(r.total).toBeCloseTo(expected, 9);
      expect(r.turns).toHaveLength(turns.length);
      expect(r.metrics.invalid_turns).toBe(turns.filter((t) => t === "error").length);
      expect(r.metrics.no_score).toBe(valid.length ? 0 : 1);
    }
  });

  test("relative_to=best: measured against the best score so far", () => {
    const r = deltaRewards(trajectory([2, 1.5, 3], maxSpec(1)), cfg({ relative_to: "best" }));
    expect(r.turns).toEqual([1, -0.5, 1]);
    const m = deltaRewards(trajectory([8, 9, 7], minSpec(10)), cfg({ relative_to: "best" }));
    expect(m.turns).toEqual([2, -1, 1]);
  });

  test("scale, clip and normalisation by |baseline|", () => {
    expect(deltaRewards(trajectory([150], minSpec(200)), cfg({ normalize: "baseline" })).turns).toEqual([
      0.25,
    ]);
    expect(deltaRewards(trajectory([0.7], maxSpec(0.5)), cfg({ scale: 10 })).turns[0]).toBeCloseTo(2, 12);
    expect(deltaRewards(trajectory([0.7, 0.1], maxSpec(0.5)), cfg({ scale: 10, clip: 1 })).turns).toEqual([
      1, -1,
    ]);
    const zero = deltaRewards(trajectory([0.5], maxSpec(0)), cfg({ normalize: "baseline" }));
    expect(zero.turns).toEqual([0.5]);
    expect(zero.metrics.normalize_fallback).toBe(1);
  });

  test("terminal reward: terminal_weight × (final − baseline) on the last turn", () => {
    const r = deltaRewards(trajectory([0.6, null, 0.7, null], maxSpec(0.5)), cfg({ terminal_weight: 2 }));
    expect(r.turns[0]).toBeCloseTo(0.1, 12);
    expect(r.turns[2]).toBeCloseTo(0.1, 12);
    expect(r.turns[3]).toBeCloseTo(0.4, 12);
    expect(r.total).toBeCloseTo(0.6, 12);
  });

  test("invalid scores are explicit: evaluation error, missing metric, NaN", () => {
    const t = trajectory(["error", { other: 1 }, { m: Number.NaN }, 0.9], maxSpec(0.5));
    const r = deltaRewards(t, cfg({ invalid_reward: -0.2, no_score_reward: 0 }));
    expect(r.turns.slice(0, 3)).toEqual([-0.2, -0.2, -0.2]);
    expect(r.turns[3]).toBeCloseTo(0.4, 12);
    expect(r.metrics.invalid_turns).toBe(3);
    expect(r.metrics.scored_turns).toBe(1);
  });

  test("a rollout without any score gets no_score_reward on every turn and is counted", () => {
    const r = deltaRewards(trajectory([null, null], maxSpec(0.5)), cfg({ no_score_reward: -0.01 }));
    expect(r.turns).toEqual([-0.01, -0.01]);
    expect(r.metrics.no_score).toBe(1);
  });

  test("missing baseline: the first score is the reference, or zero", () => {
    const first = deltaRewards(trajectory([3, 5], maxSpec()), cfg());
    expect(first.turns).toEqual([0, 2]);
    expect(first.metrics.baseline_from_first_score).toBe(1);
    expect(deltaRewards(trajectory([3, 5], maxSpec()), cfg({ missing_baseline: "zero" })).turns).toEqual([
      3, 2,
    ]);
  });

  test("score_kinds: only scores of the listed step kinds count; the others are ignored and counted", () => {
    const t = trajectory([0.6, 0.7, "error"], maxSpec(0.5));
    t.turns[1]!.stepKind = "submit";
    t.turns[2]!.stepKind = "validate";
    const r = deltaRewards(t, cfg({ score_kinds: ["submit"], invalid_reward: -1 }));
    expect(r.turns[0]).toBe(0);
    expect(r.turns[1]).toBeCloseTo(0.2, 12);
    expect(r.turns[2]).toBe(0);
    expect(r.metrics).toMatchObject({ ignored_kind_turns: 2, scored_turns: 1, invalid_turns: 0 });
  });

  test("metric names match case-insensitively (Accuracy vs accuracy)", () => {
    const spec: ScoreSpec = { priorityMetric: "Accuracy", directions: {}, baseline: { Accuracy: 0.7 } };
    const r = deltaRewards(trajectory([{ accuracy: 0.8 }], spec), cfg());
    expect(r.turns[0]).toBeCloseTo(0.1, 12);
  });

  test("metric and direction overrides; no metric at all is an error only when scores exist", () => {
    const r = deltaRewards(trajectory([{ time: 4 }]), cfg({ metric: "time", direction: "minimize" }));
    expect(r.metrics.baseline_from_first_score).toBe(1);
    const spec: ScoreSpec = { priorityMetric: "m", directions: {}, baseline: { m: 1, time: 5 } };
    const over = deltaRewards(
      trajectory([{ m: 0, time: 4 }], spec),
      cfg({ metric: "time", direction: "minimize" }),
    );
    expect(over.turns).toEqual([1]);
    expect(() => deltaRewards(trajectory([0.5]), cfg())).toThrow(/no priority metric/);
    const none = deltaRewards(trajectory([null, "error"]), cfg({ invalid_reward: -1 }));
    expect(none.turns).toEqual([0, -1]);
    expect(none.metrics.no_metric).toBe(1);
  });
});

test("definePlugin infers the delta config type from its schema", () => {
  expectTypeOf<Parameters<typeof deltaReward.create>[0]>().toEqualTypeOf<DeltaConfig>();
  expect(deltaReward).toMatchObject({ name: "delta", kind: "reward" });
});
