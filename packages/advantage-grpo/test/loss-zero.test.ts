import { describe, expect, test } from "bun:test";
import { grpoToml, runGrpo } from "./config.ts";

describe('air-agent\'s "loss = 0": no rollout ever validates', () => {
  test("core flags zero variance, the log says the loss will be 0, the advantage diagnostics agree", async () => {
    const run = await runGrpo(grpoToml({ mode: "never" }));
    expect(run.summary).toMatchObject({ status: "completed", stepsCompleted: 2 });
    expect(run.steps).toHaveLength(2);
    for (const step of run.steps) {
      expect(step.metrics["group/zero_variance_frac"]).toBe(1);
      expect(step.metrics["rollout/no_score_frac"]).toBe(1);
      expect(step.metrics["advantage/zero_variance_frac"]).toBe(1);
      expect(step.metrics["advantage/zero_frac"]).toBe(1);
      expect(step.metrics["advantage/min"]).toBe(0);
      expect(step.metrics["advantage/max"]).toBe(0);
      expect(step.metrics["advantage/std"]).toBe(0);
      expect(step.batch.samples.length).toBeGreaterThan(0);
      for (const sample of step.batch.samples) expect(sample.advantages.every((a) => a === 0)).toBe(true);
    }
    for (const t of run.trajectories) {
      expect(t.metrics["reward/delta/no_score"]).toBe(1);
      expect(t.reward).toBe(0);
    }
    const warnings = run.logs.filter((l) => l.level === "warn" && /loss will be 0/.test(l.message));
    expect(warnings.map((w) => w.message.match(/^step (\d+)/)?.[1])).toEqual(["0", "1"]);
    expect(warnings[0]!.message).toContain("100% of rollouts never produced a score");
  });

  test("with filter_zero_advantages every sample is dropped and counted", async () => {
    const run = await runGrpo(grpoToml({ mode: "never", filterZero: true, steps: 1 }));
    expect(run.summary.status).toBe("completed");
    const metrics = run.steps[0]!.metrics;
    expect(metrics["batch/zero_advantage_dropped_frac"]).toBe(1);
    expect(metrics["batch/samples"]).toBe(0);
    expect(run.logs.some((l) => l.level === "warn" && /the batch has no samples/.test(l.message))).toBe(true);
  });

  test("control: when rollouts validate, rewards differ and the diagnostics do not flag every group", async () => {
    const run = await runGrpo(grpoToml({ mode: "mixed" }));
    expect(run.summary.status).toBe("completed");
    for (const step of run.steps) {
      expect(step.metrics["group/zero_variance_frac"]).toBeLessThan(1);
      expect(step.metrics["advantage/zero_variance_frac"]).toBeLessThan(1);
      expect(step.metrics["advantage/max"]).toBeGreaterThan(0);
    }
    expect(run.logs.some((l) => /loss will be 0/.test(l.message))).toBe(false);
  });
});
