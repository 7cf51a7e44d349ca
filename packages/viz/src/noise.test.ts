import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, recordAudits } from "@air/logger-sqlite";
import { EVALUATION_NOISE_PROBE } from "@air/logger-sqlite/read";
import { runFixture } from "@air/logger-sqlite/testing";
import { createApp } from "./app.ts";
import type { Point } from "./derived.ts";

let dir = "";
let dbPath = "";
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "air-viz-noise-"));
  ({ dbPath } = await runFixture({ dir, maxSteps: 2 }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function series(): Promise<Record<string, Point[]>> {
  const app = createApp(dbPath);
  try {
    return ((await (await app.request("/api/runs/1/series")).json()) as { series: Record<string, Point[]> })
      .series;
  } finally {
    app.close();
  }
}

test("score charts: the audit's evaluation noise as a band of ± 1 std around each task's baseline", async () => {
  const before = await series();
  const baselines = Object.keys(before).filter((k) => /^task\/.*\/baseline$/.test(k));
  expect(baselines.length).toBeGreaterThan(0);
  expect(Object.keys(before).filter((k) => k.includes("noise"))).toEqual([]);
  const task = baselines[0]!.split("/")[1]!;
  const db = openStore(dbPath);
  recordAudits(db, [
    {
      config: "c.toml",
      task,
      probe: EVALUATION_NOISE_PROBE,
      group: "baseline",
      verdict: "ok",
      critical: false,
      score: 0.25,
      evidence: "std 0.25",
      createdAt: Date.now(),
    },
  ]);
  db.$client.close();
  const after = await series();
  const base = after[`task/${task}/baseline`]!;
  expect(after[`task/${task}/noise_high`]).toEqual(base.map(([x, y]): Point => [x, y + 0.25]));
  expect(after[`task/${task}/noise_low`]).toEqual(base.map(([x, y]): Point => [x, y - 0.25]));
});
