import { describe, expect, test } from "bun:test";
import type { ScoreSpec, Turn } from "@air/core";
import { makeTrajectory, makeTurn } from "@air/core/testing";
import { deltaRewards } from "./delta.ts";
import { DELTA_DEFAULTS } from "./options.ts";
import { impossibleScore, metricRange } from "./range.ts";

describe("metric ranges", () => {
  test("fractions, r2 at most 1, errors never negative, unknown names unbounded", () => {
    expect(metricRange("Accuracy")?.max).toBe(1);
    expect(metricRange("val_accuracy")?.min).toBe(0);
    expect(impossibleScore("accuracy", 1.02)).toMatch(/accuracy = 1.02 is impossible/);
    expect(impossibleScore("Accuracy", 1)).toBeUndefined();
    expect(impossibleScore("r2", -3)).toBeUndefined();
    expect(impossibleScore("r2", 1.3)).toMatch(/at most 1/);
    expect(impossibleScore("rmse", -0.1)).toMatch(/never negative/);
    expect(impossibleScore("Score", 99)).toBeUndefined();
  });
});

describe("delta refuses impossible scores", () => {
  const spec: ScoreSpec = { priorityMetric: "Accuracy", directions: {}, baseline: { Accuracy: 0.7 } };
  const turn = (index: number, accuracy: number): Turn => ({
    ...makeTurn({ index, completionLogprobs: [-0.1] }),
    stepKind: "validate",
    scores: { accuracy },
  });

  test("the turn gets no reward, a warning names the score, and the reference is unchanged", () => {
    const warnings: string[] = [];
    const trajectory = makeTrajectory({
      task: "titanic",
      turns: [turn(0, 0.8), turn(1, 99), turn(2, 0.9)],
      score: spec,
    });
    const r = deltaRewards(trajectory, DELTA_DEFAULTS, (m) => warnings.push(m));
    expect(r.turns[0]).toBeCloseTo(0.1, 12);
    expect(r.turns[1]).toBe(0);
    expect(r.turns[2]).toBeCloseTo(0.1, 12);
    expect(r.metrics.impossible_turns).toBe(1);
    expect(r.metrics.scored_turns).toBe(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/turn 1 .* gets no reward: accuracy = 99 is impossible/i);
  });
});

describe("task score ranges (ScoreSpec.ranges)", () => {
  const ranges = { Score: { min: 0, max: 2 } };

  test("a declared range decides (ignoring case); an open end is unbounded", () => {
    expect(impossibleScore("Score", 9, ranges)).toBe(
      "Score = 9 is impossible (Score is in [0, 2] for this task)",
    );
    expect(impossibleScore("score", -0.5, ranges)).toMatch(/impossible/);
    expect(impossibleScore("Score", 2, ranges)).toBeUndefined();
    expect(impossibleScore("Score", 1e9, { Score: { min: 0 } })).toBeUndefined();
    expect(impossibleScore("Score", -1, { Score: { min: 0 } })).toMatch(/in \[0, inf\]/);
    expect(impossibleScore("accuracy", 1.5, ranges)).toMatch(/a fraction/);
  });

  test("a forged game score outside the task's range is never paid", () => {
    const spec: ScoreSpec = { priorityMetric: "Score", directions: {}, baseline: { Score: 1.02 }, ranges };
    const turn = (index: number, score: number): Turn => ({
      ...makeTurn({ index, completionLogprobs: [-0.1] }),
      stepKind: "validate",
      scores: { Score: score },
    });
    const trajectory = makeTrajectory({
      task: "battleOfSexes",
      turns: [turn(0, 9), turn(1, 1.2)],
      score: spec,
    });
    const r = deltaRewards(trajectory, DELTA_DEFAULTS);
    expect(r.turns[0]).toBe(0);
    expect(r.turns[1]).toBeCloseTo(0.18, 12);
    expect(r.metrics.impossible_turns).toBe(1);
    const unbounded = deltaRewards({ ...trajectory, score: { ...spec, ranges: undefined } }, DELTA_DEFAULTS);
    expect(unbounded.turns[0]).toBeCloseTo(9 - 1.02, 12);
  });
});
