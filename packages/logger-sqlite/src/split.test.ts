import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openStore } from "./open.ts";
import {
  evalRollouts,
  improvementPoints,
  listTrajectories,
  liveStatus,
  taskSummary,
  trajectoryStepStats,
} from "./queries/index.ts";
import { RunRecorder } from "./recorder.ts";
import { runs, trajectories } from "./schema.ts";
import { runFixture } from "./testing/run.ts";

const dir = mkdtempSync(join(tmpdir(), "air-split-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("periodic eval rollouts are stored with split 'eval' and kept out of training stats", async () => {
  const run = await runFixture({ dir, maxSteps: 3, evalEvery: 1 });
  expect(run.summary.status).toBe("completed");
  const db = openStore(run.dbPath, { readonly: true });
  try {
    const rows = db
      .select({ id: trajectories.rolloutId, split: trajectories.split })
      .from(trajectories)
      .all();
    const evals = rows.filter((r) => r.split === "eval");
    const train = rows.filter((r) => r.split === "train");
    expect(evals.length).toBeGreaterThan(0);
    expect(evals.every((r) => r.id.startsWith("e"))).toBe(true);
    expect(train.length).toBe(12);
    expect(train.every((r) => r.id.startsWith("s"))).toBe(true);
    expect(taskSummary(db, 1).reduce((a, t) => a + t.episodes, 0)).toBe(12);
    expect(trajectoryStepStats(db, 1).map((s) => s.count)).toEqual([4, 4, 4]);
    expect(improvementPoints(db, 1).length).toBeLessThanOrEqual(12);
    expect(evalRollouts(db, 1)).toHaveLength(evals.length);
    const page = { page: 1, per: 200, sort: "step" } as const;
    expect(listTrajectories(db, 1, { ...page, split: "eval" }).total).toBe(evals.length);
    expect(listTrajectories(db, 1, page).total).toBe(rows.length);
  } finally {
    db.$client.close();
  }
}, 60_000);

test("the recorder beats: runs.heartbeat_at advances while it is open, and a stale running run reads as dead", async () => {
  const db = openStore(join(dir, "beat.db"));
  const recorder = new RunRecorder(db, { flushRows: 100, flushMs: 1000, heartbeatMs: 10 }, { name: "beat" });
  const at = () =>
    db.select({ at: runs.heartbeatAt }).from(runs).where(eq(runs.id, recorder.runId)).get()!.at!;
  const first = at();
  // heartbeats every 10 ms: the next one lands within ms idle, within seconds on a busy machine
  let later = at();
  for (const deadline = Date.now() + 30_000; later <= first && Date.now() < deadline; later = at())
    await Bun.sleep(10);
  expect(later).toBeGreaterThan(first);
  recorder.close();
  const row = { status: "running", heartbeatAt: later, startedAt: first };
  expect(liveStatus(row, later + 1000)).toBe("running");
  expect(liveStatus(row, later + 31_000)).toBe("dead");
  expect(liveStatus({ ...row, status: "completed" }, later + 31_000)).toBe("completed");
  expect(liveStatus({ ...row, heartbeatAt: null }, first + 31_000)).toBe("dead");
});
