import { describe, expect, test } from "bun:test";
import type { EventHandlers } from "@air/core";
import { progressRecorder } from "./progress-record.ts";

type Payload<K extends keyof EventHandlers> = Parameters<EventHandlers[K]>[0];

function stepEnd(step: number): Payload<"step:end"> {
  return {
    step,
    trajectories: [],
    batch: { schemaVersion: 1, step, samples: [], metrics: {} },
    metrics: { "reward/mean": step },
    warnings: [],
  };
}

describe("progressRecorder", () => {
  test("a step is recorded when its weights arrive, not at step:end", async () => {
    const seen: [number, Record<string, number>][] = [];
    const hooks = progressRecorder((step, metrics) => seen.push([step, metrics]));
    await hooks["step:end"]?.(stepEnd(0));
    expect(seen).toEqual([]);
    await hooks["weights:updated"]?.({
      weights: { version: 1, path: "/w", kind: "full" },
      metrics: { "trainer/loss": 0.5 },
    });
    expect(seen).toEqual([[0, { "reward/mean": 0, "trainer/loss": 0.5 }]]);
    // A crash now (step 1 ended, no weights) leaves step 0 as the last completed one.
    await hooks["step:end"]?.(stepEnd(1));
    expect(seen.map(([s]) => s)).toEqual([0]);
  });

  test("a step without weights is done when the next one ends or the run completes", async () => {
    const seen: number[] = [];
    const hooks = progressRecorder((step) => seen.push(step));
    await hooks["step:end"]?.(stepEnd(0));
    await hooks["step:end"]?.(stepEnd(1));
    expect(seen).toEqual([0]);
    await hooks["run:end"]?.({ status: "completed", unsettled: [] });
    expect(seen).toEqual([0, 1]);
  });

  test("a failed or aborted run does not record the step whose batch may never have reached the trainer", async () => {
    for (const status of ["failed", "aborted"] as const) {
      const seen: number[] = [];
      const hooks = progressRecorder((step) => seen.push(step));
      await hooks["step:end"]?.(stepEnd(0));
      await hooks["step:end"]?.(stepEnd(1));
      // e.g. trainer.submit of step 1 failed with ENOSPC: no space left on device
      await hooks["run:end"]?.({ status, error: "ENOSPC", unsettled: [] });
      expect(seen).toEqual([0]);
    }
  });
});
