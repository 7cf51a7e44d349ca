import { describe, expect, test } from "bun:test";
import type { Group, Trajectory } from "@air/core";
import { makeGroup, makeTrajectory, makeTurn, seededRandom } from "@air/core/testing";
import { expectTypeOf } from "expect-type";
import { computeAdvantages } from "./compute.ts";
import { centre, returnsToGo } from "./estimators.ts";
import { GRPO_DEFAULTS, type GrpoConfig, grpoConfigSchema } from "./options.ts";
import { grpoAdvantage } from "./plugin.ts";

function trajectory(id: string, turnRewards: number[], total?: number): Trajectory {
  return makeTrajectory({
    id,
    turns: turnRewards.map((reward, index) => makeTurn({ index, reward })),
    reward: total ?? turnRewards.reduce((a, b) => a + b, 0),
  });
}

function group(id: string, members: number[][]): Group {
  return makeGroup(
    id,
    members.map((r, i) => trajectory(`${id}-${i}`, r)),
  );
}

function randomGroups(random: () => number, equalLengths: boolean): Group[] {
  return Array.from({ length: 1 + Math.floor(random() * 4) }, (_, g) => {
    const n = 1 + Math.floor(random() * 8);
    const fixed = 1 + Math.floor(random() * 5);
    return group(
      `g${g}`,
      Array.from({ length: n }, () =>
        Array.from({ length: equalLengths ? fixed : 1 + Math.floor(random() * 5) }, () =>
          random() < 0.5 ? 0 : Math.round((random() * 4 - 2) * 100) / 100,
        ),
      ),
    );
  });
}

const cfg = (over: Partial<GrpoConfig> = {}): GrpoConfig => ({ ...GRPO_DEFAULTS, ...over });
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("estimators", () => {
  test("defaults: grpo, mean-centering without std (prime-rl's default), total per turn", () => {
    expect(GRPO_DEFAULTS).toMatchObject({
      estimator: "grpo",
      std_normalize: false,
      per_turn: "total",
      discount: 1,
    });
    expect(centre([1, 0, 0, 1], GRPO_DEFAULTS)).toEqual([0.5, -0.5, -0.5, 0.5]);
  });

  test("dr_grpo with std_normalize is rejected by the config schema", () => {
    const r = grpoConfigSchema.safeParse({ estimator: "dr_grpo", std_normalize: true });
    expect(r.success).toBe(false);
    expect(grpoConfigSchema.safeParse({ estimator: "grpo", std_normalize: true }).success).toBe(true);
  });

  test("rloo = x − mean of the others = n/(n−1) × (x − mean)", () => {
    const x = [3, 1, 2, 6];
    const r = centre(x, cfg({ estimator: "rloo" }));
    expect(r[0]).toBeCloseTo(3 - 3, 12);
    expect(r[3]).toBeCloseTo(6 - 2, 12);
    const g = centre(x, cfg());
    for (const [i, v] of r.entries()) expect(v).toBeCloseTo((4 / 3) * g[i]!, 12);
  });

  test("std normalisation gives unit std; equal values and singletons give exact zeros", () => {
    const a = centre([1, 2, 3, 10], cfg({ std_normalize: true, eps: 1e-12 }));
    const std = Math.sqrt(sum(a.map((v) => v ** 2)) / a.length);
    expect(std).toBeCloseTo(1, 9);
    for (const e of ["grpo", "dr_grpo", "rloo"] as const) {
      expect(centre([0.1, 0.1, 0.1], cfg({ estimator: e }))).toEqual([0, 0, 0]);
      expect(centre([7], cfg({ estimator: e }))).toEqual([0]);
    }
  });

  test("returnsToGo with and without discount", () => {
    expect(returnsToGo([1, 0, 2], 1)).toEqual([3, 2, 2]);
    expect(returnsToGo([1, 0, 2], 0.5)).toEqual([1.5, 1, 2]);
    expect(returnsToGo([], 0.9)).toEqual([]);
  });
});

describe("computeAdvantages", () => {
  test("property: trajectory advantages sum to 0 per group (grpo, dr_grpo, rloo, with and without std)", () => {
    const random = seededRandom(3);
    for (let k = 0; k < 200; k++) {
      const groups = randomGroups(random, false);
      for (const config of [
        cfg(),
        cfg({ estimator: "dr_grpo" }),
        cfg({ estimator: "rloo" }),
        cfg({ std_normalize: true }),
        cfg({ estimator: "rloo", std_normalize: true }),
      ]) {
        const { values } = computeAdvantages(groups, config);
        expect(values).toHaveLength(groups.length);
        for (const [g, grp] of groups.entries()) {
          const perTrajectory = values[g]!.map((turns, t) => {
            expect(turns).toHaveLength(grp.trajectories[t]!.turns.length);
            expect(new Set(turns).size).toBe(1);
            return turns[0]!;
          });
          expect(Math.abs(sum(perTrajectory))).toBeLessThan(1e-9);
        }
      }
    }
  });

  test("property: return_to_go advantages sum to 0 per group at every turn (equal lengths)", () => {
    const random = seededRandom(5);
    for (let k = 0; k < 200; k++) {
      const groups = randomGroups(random, true);
      const discount = random() < 0.5 ? 1 : 0.9;
      for (const estimator of ["grpo", "rloo"] as const) {
        const { values } = computeAdvantages(groups, cfg({ estimator, per_turn: "return_to_go", discount }));
        for (const [g, grp] of groups.entries()) {
          const length = grp.trajectories[0]!.turns.length;
          for (let turn = 0; turn < length; turn++)
            expect(Math.abs(sum(values[g]!.map((v) => v[turn]!)))).toBeLessThan(1e-9);
        }
      }
    }
  });

  test("return_to_go credits each turn with the rewards from it on, against the group at that turn", () => {
    const groups = [
      group("g", [
        [0, 1, 0],
        [0, 0, 0],
      ]),
    ];
    const { values } = computeAdvantages(groups, cfg({ per_turn: "return_to_go" }));
    expect(values[0]).toEqual([
      [0.5, 0.5, 0],
      [-0.5, -0.5, 0],
    ]);
    const total = computeAdvantages(groups, cfg()).values[0];
    expect(total).toEqual([
      [0.5, 0.5, 0.5],
      [-0.5, -0.5, -0.5],
    ]);
  });

  test("return_to_go with unequal lengths: an ended trajectory counts as return 0 in the baseline", () => {
    const { values } = computeAdvantages([group("g", [[1, 1], [2]])], cfg({ per_turn: "return_to_go" }));
    expect(values[0]).toEqual([[0, 0.5], [0]]);
  });

  test("diagnostics: zero-variance fraction, zero fraction and the advantage summary", () => {
    const groups = [group("a", [[1], [0]]), group("b", [[0.3], [0.3]]), group("c", [[0, 0], [0]])];
    const { metrics } = computeAdvantages(groups, cfg());
    expect(metrics.groups).toBe(3);
    expect(metrics.zero_variance_frac).toBeCloseTo(2 / 3, 12);
    expect(metrics.zero_frac).toBeCloseTo(4 / 6, 12);
    expect(metrics.min).toBe(-0.5);
    expect(metrics.max).toBe(0.5);
    expect(metrics.mean).toBe(0);
    expect(metrics.std).toBeGreaterThan(0);
    const none = computeAdvantages([], cfg()).metrics;
    expect(none).toMatchObject({ groups: 0, zero_variance_frac: 0, mean: 0 });
  });
});

test("definePlugin infers the grpo config type from its schema", () => {
  expectTypeOf<Parameters<typeof grpoAdvantage.create>[0]>().toEqualTypeOf<GrpoConfig>();
  expect(grpoAdvantage).toMatchObject({ name: "grpo", kind: "advantage" });
});
