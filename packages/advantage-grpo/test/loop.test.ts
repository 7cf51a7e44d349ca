import { describe, expect, test } from "bun:test";
import type { Trajectory } from "@air/core";
import { grpoToml, runGrpo } from "./config.ts";

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function byId(trajectories: Trajectory[]): Map<string, Trajectory> {
  return new Map(trajectories.map((t) => [t.id, t]));
}

describe("delta + grpo + strategies through the loop", () => {
  test("branching: delta rewards follow rmse decreases; token advantages = reward − group mean", async () => {
    const run = await runGrpo(grpoToml({ mode: "mixed", steps: 2 }));
    expect(run.summary).toMatchObject({ status: "completed", stepsCompleted: 2 });
    expect(run.batches).toHaveLength(2);
    let checkedTurns = 0;
    for (const step of run.steps) {
      const trajectories = byId(step.trajectories);
      for (const t of step.trajectories) {
        let previous = 10;
        let final: number | undefined;
        for (const turn of t.turns) {
          const rmse = turn.evaluationError ? undefined : turn.scores?.rmse;
          if (rmse === undefined) {
            expect(turn.rewardBreakdown?.delta).toBe(0);
            continue;
          }
          expect(turn.rewardBreakdown?.delta).toBeCloseTo(previous - rmse, 12);
          previous = rmse;
          final = rmse;
          checkedTurns++;
        }
        expect(t.reward).toBeCloseTo(final === undefined ? 0 : 10 - final, 9);
      }
      for (const sample of step.batch.samples) {
        const t = trajectories.get(sample.trajectoryId)!;
        const group = step.trajectories.filter((x) => x.groupId === t.groupId);
        const expected = t.reward! - mean(group.map((x) => x.reward!));
        expect(sample.spans).toHaveLength(1);
        for (let i = 0; i < sample.tokenIds.length; i++)
          expect(sample.advantages[i]!).toBeCloseTo(sample.lossMask[i] ? expected : 0, 9);
      }
      const turnCount = step.trajectories.reduce((a, t) => a + t.turns.length, 0);
      expect(step.metrics["strategy/samples"]).toBe(turnCount);
      expect(step.batch.samples).toHaveLength(turnCount);
    }
    expect(checkedTurns).toBeGreaterThan(0);
  });

  test("interleaved: one sample per rollout while prompts extend; dropped reasoning breaks the prefix", async () => {
    const kept = await runGrpo(grpoToml({ mode: "mixed", strategy: "interleaved", steps: 1 }));
    const step = kept.steps[0]!;
    expect(step.trajectories.some((t) => t.turns.length > 1)).toBe(true);
    expect(step.metrics["strategy/prefix_breaks"]).toBe(0);
    expect(step.batch.samples).toHaveLength(step.trajectories.length);
    for (const sample of step.batch.samples) {
      const t = step.trajectories.find((x) => x.id === sample.trajectoryId)!;
      const last = t.turns.at(-1)!;
      expect(sample.tokenIds).toEqual([...last.promptTokenIds, ...last.completionTokenIds]);
    }

    const broken = await runGrpo(grpoToml({ mode: "mixed", strategy: "interleaved", think: true, steps: 1 }));
    const b = broken.steps[0]!;
    const expectedBreaks = b.trajectories.reduce((a, t) => a + Math.max(0, t.turns.length - 1), 0);
    expect(expectedBreaks).toBeGreaterThan(0);
    expect(b.metrics["strategy/prefix_breaks"]).toBe(expectedBreaks);
    expect(b.batch.samples).toHaveLength(b.trajectories.reduce((a, t) => a + t.turns.length, 0));
  });

  test("return_to_go: turns after the last improvement get a different advantage than earlier ones", async () => {
    const run = await runGrpo(
      grpoToml({ mode: "mixed", steps: 1, advantage: 'per_turn = "return_to_go"\nestimator = "rloo"' }),
    );
    expect(run.summary.status).toBe("completed");
    const step = run.steps[0]!;
    const perTrajectory = new Map<string, Set<number>>();
    for (const s of step.batch.samples) {
      const set = perTrajectory.get(s.trajectoryId) ?? new Set<number>();
      for (const [i, a] of s.advantages.entries()) if (s.lossMask[i]) set.add(a);
      perTrajectory.set(s.trajectoryId, set);
    }
    expect([...perTrajectory.values()].some((set) => set.size > 1)).toBe(true);
  });

  test("a bad advantage option is a config error naming the TOML path", async () => {
    await expect(
      runGrpo(grpoToml({ mode: "never", advantage: 'estimator = "dr_grpo"\nstd_normalize = true' })),
    ).rejects.toThrow(/advantage\.std_normalize: dr_grpo never divides by the std/);
  });
});
