import { describe, expect, test } from "bun:test";
import { makeGroup, makeTrajectory, makeTurn } from "../testing/index.ts";
import type { Trajectory } from "../types.ts";
import { treeAdvantage, treeShape } from "./tree-advantage.ts";

/** root r → a (leaves a1 = 1, a2 = 0), b (leaf, 0): a second root s is a leaf with 1. */
function forest(): Trajectory[] {
  const node = (id: string, parent: string | undefined, reward: number | undefined) =>
    makeTrajectory({
      id,
      reward,
      turns: [makeTurn()],
      ...(parent ? { parent: { trajectoryId: parent, turnIndex: 1 } } : {}),
    });
  return [
    node("r", undefined, undefined),
    node("a", "r", undefined),
    node("a1", "a", 1),
    node("a2", "a", 0),
    node("b", "r", 0),
    node("s", undefined, 1),
  ];
}

const adv = (ts: Trajectory[], values: number[][]) =>
  Object.fromEntries(ts.map((t, i) => [t.id, values[i]?.[0] ?? Number.NaN]));

describe("tree advantages", () => {
  test("values are the mean of the leaves under a node", () => {
    const { value, leafReturns } = treeShape(forest());
    expect(value.get("a")).toBe(0.5);
    expect(value.get("r")).toBe(1 / 3);
    expect(leafReturns.get("r")).toEqual([1, 0, 0]);
  });

  test("sibling advantages: V(n) − mean of its siblings' V, zero-sum per sibling set", () => {
    const ts = forest();
    const result = treeAdvantage({ global_weight: 0, sqrt_leaves: false }).compute([makeGroup("g", ts)]);
    const a = adv(ts, result.values[0] ?? []);
    expect(a.a1).toBeCloseTo(0.5, 12);
    expect(a.a2).toBeCloseTo(-0.5, 12);
    expect(a.a).toBeCloseTo(0.25, 12);
    expect(a.b).toBeCloseTo(-0.25, 12);
    expect(a.r).toBeCloseTo(1 / 3 - 2 / 3, 12);
    expect(a.s).toBeCloseTo(1 - 2 / 3, 12);
    for (const set of [
      ["a1", "a2"],
      ["a", "b"],
      ["r", "s"],
    ])
      expect(Math.abs(set.reduce((x, id) => x + (a[id] ?? 0), 0))).toBeLessThan(1e-12);
    expect(result.metrics.sibling_sets).toBe(3);
  });

  test("TreeRL's global term and 1/√leaves", () => {
    const ts = forest();
    const mean = 2 / 4;
    const g = treeAdvantage({ global_weight: 1, sqrt_leaves: true }).compute([makeGroup("g", ts)]);
    const a = adv(ts, g.values[0] ?? []);
    expect(a.a).toBeCloseTo((0.25 + (0.5 - mean)) / Math.sqrt(2), 12);
    expect(a.a1).toBeCloseTo((0.5 + (1 - mean)) / 1, 12);
    expect(a.r).toBeCloseTo((1 / 3 - 2 / 3 + (1 / 3 - mean)) / Math.sqrt(3), 12);
  });

  test("a branch point whose children all failed has no value and gets no advantage", () => {
    const ts = forest()
      .filter((t) => t.id !== "a1" && t.id !== "a2")
      .map((t) => (t.id === "a" ? { ...t, stopReason: "branched" as const } : t));
    const { value } = treeShape(ts);
    expect(value.has("a")).toBe(false);
    expect(value.get("r")).toBe(0);
    const result = treeAdvantage({ global_weight: 0, sqrt_leaves: false }).compute([makeGroup("g", ts)]);
    expect(adv(ts, result.values[0] ?? []).a).toBe(0);
  });

  test("a sibling set whose values are all equal counts as zero-variance and gets 0", () => {
    const ts = forest().map((t) => (t.reward === undefined ? t : { ...t, reward: 1 }));
    const result = treeAdvantage({ global_weight: 0, sqrt_leaves: false }).compute([makeGroup("g", ts)]);
    expect(result.values[0]?.flat().every((v) => v === 0)).toBe(true);
    expect(result.metrics.sibling_zero_variance_frac).toBe(1);
  });
});
