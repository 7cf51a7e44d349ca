import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitForStepMetrics } from "./metrics.ts";

const root = mkdtempSync(join(tmpdir(), "air-metrics-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A bound no test reaches unless the wait is broken (the wait must end on the row or the next STABLE). */
const GENEROUS_MS = 120_000;

describe("waitForStepMetrics: the row after a checkpoint save", () => {
  test("a row that comes late (a slow checkpoint save) is awaited, not dropped", async () => {
    const file = join(root, "late.jsonl");
    writeFileSync(file, `${JSON.stringify({ step: 3, "perf/mfu": 1 })}\n`);
    let polls = 0;
    const waiting = waitForStepMetrics(file, 3, {
      waitMs: GENEROUS_MS,
      pollMs: 5,
      nextStepStarted: () => {
        polls++;
        if (polls === 20) appendFileSync(file, `${JSON.stringify({ step: 3, "loss/mean": 0.5 })}\n`);
        return false;
      },
    });
    const { metrics, missing } = await waiting;
    expect(polls).toBeGreaterThanOrEqual(20);
    expect(missing).toBeUndefined();
    expect(metrics).toEqual({ "trainer/perf/mfu": 1, "trainer/loss": 0.5 });
  });

  test("the next step's STABLE ends the wait, after one more read (the row is written before it)", async () => {
    const file = join(root, "next.jsonl");
    writeFileSync(file, "");
    const started = Date.now();
    const written = await waitForStepMetrics(file, 4, {
      waitMs: GENEROUS_MS,
      pollMs: 5,
      nextStepStarted: () => {
        appendFileSync(file, `${JSON.stringify({ step: 4, "loss/mean": 0.25 })}\n`);
        return true;
      },
    });
    expect(written).toEqual({ metrics: { "trainer/loss": 0.25 } });
    const none = await waitForStepMetrics(join(root, "next.jsonl"), 7, {
      waitMs: GENEROUS_MS,
      pollMs: 5,
      nextStepStarted: () => true,
    });
    expect(none.metrics).toBeNull();
    expect(none.missing).toBe("step 8's weights came without a loss/mean row for step 7");
    expect(Date.now() - started).toBeLessThan(GENEROUS_MS);
  });

  test("the bound ends the wait with the reason; no metrics file (no [monitors.file]) returns at once", async () => {
    const file = join(root, "bound.jsonl");
    writeFileSync(file, `${JSON.stringify({ step: 2, "optim/lr": 0.1 })}\n`);
    const bounded = await waitForStepMetrics(file, 2, { waitMs: 0, pollMs: 5 });
    expect(bounded).toEqual({
      metrics: { "trainer/lr": 0.1 },
      missing: "no loss/mean row for step 2 within metrics_wait_ms = 0",
    });
    expect(
      await waitForStepMetrics(join(root, "absent.jsonl"), 2, { waitMs: GENEROUS_MS, pollMs: 5 }),
    ).toEqual({ metrics: null });
  });
});
