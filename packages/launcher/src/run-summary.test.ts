import { describe, expect, test } from "bun:test";
import type { RunSummary } from "@air/core";
import { summaryLine } from "./run-summary.ts";

const base: RunSummary = { status: "completed", stepsCompleted: 2, unsettled: [], peakConcurrentRollouts: 8 };

describe("summaryLine", () => {
  test("a run that trained says so and succeeds", () => {
    const end = summaryLine({ ...base, totals: { rolloutsOk: 16, rolloutsFailed: 0, samplesTrained: 16 } });
    expect(end).toEqual({
      ok: true,
      line: "run completed: 2 step(s), rollouts 16 ok / 0 failed, 16 sample(s) trained",
    });
  });

  test("a run whose trainer returned no weights (trainer none) does not claim its samples were trained", () => {
    const totals = { rolloutsOk: 16, rolloutsFailed: 0, samplesTrained: 16, weightUpdates: 0 };
    expect(summaryLine({ ...base, totals })).toEqual({
      ok: true,
      line: "run completed: 2 step(s), rollouts 16 ok / 0 failed, 16 sample(s) built, none trained (the trainer returned no weights)",
    });
    const trained = summaryLine({ ...base, totals: { ...totals, weightUpdates: 2 } });
    expect(trained.line).toEndWith(", 16 sample(s) trained");
  });

  test("a completed run that trained nothing because every rollout failed fails", () => {
    const end = summaryLine({ ...base, totals: { rolloutsOk: 0, rolloutsFailed: 16, samplesTrained: 0 } });
    expect(end.ok).toBe(false);
    expect(end.line).toBe(
      "run failed: 2 step(s), rollouts 0 ok / 16 failed, 0 sample(s) trained: nothing was trained (every rollout failed; see the errors above)",
    );
  });

  test("a resume with no step left (it ran the eval a kill cut short) completes: it had nothing to train", () => {
    const totals = { rolloutsOk: 0, rolloutsFailed: 0, samplesTrained: 0, weightUpdates: 0 };
    expect(summaryLine({ ...base, stepsCompleted: 0, totals })).toEqual({
      ok: true,
      line: "run completed: 0 step(s), rollouts 0 ok / 0 failed, 0 sample(s) trained",
    });
  });

  test("a failed run carries its error", () => {
    const end = summaryLine({ ...base, status: "failed", error: "boom" });
    expect(end).toEqual({ ok: false, line: "run failed: 2 step(s): boom" });
  });
});
