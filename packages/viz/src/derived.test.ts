import { expect, test } from "bun:test";
import type { EvalRolloutRow } from "@air/logger-sqlite";
import {
  advantageHeatmap,
  passAtKEstimate,
  passAtKOverSteps,
  percentileHeatmap,
  percentilesOf,
} from "./derived.ts";

test("pass@k estimate: Chen et al.'s unbiased estimator", () => {
  expect(passAtKEstimate(4, 0, 1)).toBe(0);
  expect(passAtKEstimate(4, 4, 2)).toBe(1);
  expect(passAtKEstimate(4, 1, 1)).toBeCloseTo(0.25, 12);
  // 1 - C(3,2)/C(4,2) = 1 - 3/6
  expect(passAtKEstimate(4, 1, 2)).toBeCloseTo(0.5, 12);
  // 1 - C(8,4)/C(10,4) = 1 - 70/210
  expect(passAtKEstimate(10, 2, 4)).toBeCloseTo(2 / 3, 12);
});

const row = (step: number, exampleId: string, improvement: number | null, reward = 0): EvalRolloutRow => ({
  step,
  task: "t",
  exampleId,
  status: "done",
  reward,
  improvement,
});

test("pass@k over steps: per eval step, mean over examples, k up to the fewest samples", () => {
  const rows = [
    // step 0: example a 1 of 2 beat the baseline, example b 0 of 2
    row(0, "a", 0.1),
    row(0, "a", -0.1),
    row(0, "b", 0),
    row(0, "b", -0.2),
    // step 5: both examples 2 of 2 (b has no baseline: reward > 0 counts)
    row(5, "a", 0.3),
    row(5, "a", 0.2),
    row(5, "b", null, 1),
    row(5, "b", null, 0.5),
  ];
  const out = passAtKOverSteps(rows);
  expect(out["pass@1"]).toEqual([
    [0, 0.25],
    [5, 1],
  ]);
  expect(out["pass@2"]).toEqual([
    [0, 0.5],
    [5, 1],
  ]);
  expect(out["pass@4"]).toBeUndefined();
  expect(passAtKOverSteps([{ ...row(0, "a", 1), status: "failed" }])["pass@1"]).toEqual([[0, 0]]);
});

test("advantage heatmap: shared bins, each step's column sums to 1, tails in the outer bins", () => {
  const map = advantageHeatmap(
    new Map([
      [0, [-1, -1, 1, 1]],
      [1, [0, 0, 0, 100]],
    ]),
    4,
  );
  expect(map.steps).toEqual([0, 1]);
  expect(map.edges).toHaveLength(5);
  for (const column of map.share) expect(column.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  expect(map.share[1]![3]).toBeCloseTo(0.25, 12);
  expect(map.quantiles.p50).toEqual([0, 0]);
  expect(advantageHeatmap(new Map([[3, [0, 0]]]), 2).edges).toEqual([-0.5, 0, 0.5]);
});

test("the heatmap from per-step percentiles (what the store keeps) is within 2 points of the one from every value", () => {
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const values = new Map<number, number[]>();
  for (let step = 0; step < 6; step++) {
    // GRPO-like: a share of exact zeros (groups without reward variance), the rest spread, one wide step.
    const list = Array.from({ length: 200 + step * 150 }, (_, i) =>
      i % 5 === 0 ? 0 : (random() * 2 - 1) * (step === 3 ? 4 : 1),
    );
    values.set(
      step,
      list.sort((a, b) => a - b),
    );
  }
  const exact = advantageHeatmap(values);
  const fromPercentiles = percentileHeatmap(
    new Map([...values].map(([step, list]) => [step, { n: list.length, q: percentilesOf(list) }])),
  );
  expect(fromPercentiles.steps).toEqual(exact.steps);
  expect(fromPercentiles.quantiles.p50).toEqual(exact.quantiles.p50);
  for (const [i, edge] of exact.edges.entries())
    expect(Math.abs(fromPercentiles.edges[i]! - edge)).toBeLessThan(0.05);
  let worst = 0;
  for (const [i, column] of exact.share.entries()) {
    expect(fromPercentiles.share[i]!.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    for (const [j, share] of column.entries())
      worst = Math.max(worst, Math.abs(fromPercentiles.share[i]![j]! - share));
  }
  expect(worst).toBeLessThan(0.02);
});
