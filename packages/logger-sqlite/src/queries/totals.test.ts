import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seededRandom } from "@air/core/testing";
import { and, eq, inArray } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { MIGRATIONS_DIR, openStore, type StoreDb } from "../open.ts";
import { runs, samples, schema, steps, trajectories, turns } from "../schema.ts";
import {
  scanEpisodeImprovements,
  scanSampleAdvantages,
  scanTaskScoresPerStep,
  scanTaskSummary,
  scanTrajectoryStepStats,
  scanTurnErrorsPerStep,
} from "../testing/scan.ts";
import {
  advantagePercentiles,
  improvementPoints,
  taskScoresPerStep,
  taskSummary,
  trajectoryStepStats,
  turnErrorsPerStep,
} from "./totals.ts";

const dir = mkdtempSync(join(tmpdir(), "air-totals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TASKS = ["rmse", "titanic", "mnist"];
const TOOL_ERRORS = [null, null, null, "exit 1", "command timed out after 30 s", "timeout"];

/** Writes two runs of mixed trajectories (statuses, splits, nulls), their turns (some with errors) and samples. */
function fill(db: StoreDb, seed: number): void {
  // the kit's seeded RNG: a failure reproduces
  const r = seededRandom(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const maybe = (x: number) => (r() < 0.25 ? null : x);
  for (const runId of [1, 2]) {
    db.insert(runs)
      .values({ id: runId, name: `run${runId}`, startedAt: 0 })
      .run();
    for (let step = 0; step < 4; step++) {
      for (let i = 0; i < 12; i++) {
        const rolloutId = `s${step}-r${i}`;
        const status = pick(["done", "done", "failed", "running"]);
        const finished = status !== "running";
        const baseline = maybe(r() * 10);
        const final = finished ? maybe(r() * 10) : null;
        db.insert(trajectories)
          .values({
            runId,
            rolloutId,
            step,
            split: i % 5 === 4 ? "eval" : "train",
            exampleId: `ex${i % 3}`,
            task: pick(TASKS),
            groupId: `${step}:ex${i % 3}`,
            status,
            reward: finished ? maybe(r()) : null,
            validated: finished ? pick([null, true, false]) : null,
            baselineScore: baseline,
            finalScore: final,
            improvement: final !== null && baseline !== null ? baseline - final : null,
            turnCount: finished ? 1 + Math.floor(r() * 5) : 0,
          })
          .run();
        for (let idx = 0; idx < 3; idx++)
          db.insert(turns)
            .values({
              runId,
              rolloutId,
              idx,
              promptMessagesJson: "[]",
              completion: `reply ${idx}`,
              observation: "out",
              parseError: r() < 0.2 ? "no command" : null,
              toolError: pick(TOOL_ERRORS),
              evaluationError: r() < 0.1 ? "no submission" : null,
            })
            .run();
      }
      const count = 5 + Math.floor(r() * 40);
      for (let i = 0; i < count; i++)
        db.insert(samples)
          .values({
            runId,
            step,
            rolloutId: `s${step}-r${i % 12}`,
            groupId: "g",
            tokens: 10,
            lossTokens: 5,
            advantageMean: i % 4 === 0 ? 0 : r() * 2 - 1,
            advantageMin: -1,
            advantageMax: 1,
            policyVersion: step,
          })
          .run();
      db.insert(steps).values({ runId, step, startedAt: 1, endedAt: 2 }).run();
    }
  }
}

/** numpy's default (linear) percentile of sorted values. */
function percentile(sorted: number[], k: number): number {
  const pos = ((sorted.length - 1) * k) / 100;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Every aggregate read from the totals equals the same aggregate scanned from the rows. */
function expectTotalsMatchScan(db: StoreDb): void {
  for (const runId of [1, 2]) {
    const close = (got: unknown, want: unknown) => {
      expect(JSON.stringify(got, (_, v) => (typeof v === "number" ? Number(v.toFixed(9)) : v))).toBe(
        JSON.stringify(want, (_, v) => (typeof v === "number" ? Number(v.toFixed(9)) : v)),
      );
    };
    close(trajectoryStepStats(db, runId), scanTrajectoryStepStats(db, runId));
    close(turnErrorsPerStep(db, runId), scanTurnErrorsPerStep(db, runId));
    const byStepTask = (rows: Array<{ step: number; task: string }>) =>
      [...rows].sort((a, b) => a.step - b.step || a.task.localeCompare(b.task));
    close(byStepTask(taskScoresPerStep(db, runId)), byStepTask(scanTaskScoresPerStep(db, runId)));
    close(taskSummary(db, runId), scanTaskSummary(db, runId));
    const improvements = scanEpisodeImprovements(db, runId);
    close(
      improvementPoints(db, runId).map((p) => p[1]),
      improvements,
    );
    const values = new Map<number, number[]>();
    for (const s of scanSampleAdvantages(db, runId))
      values.set(s.step, [...(values.get(s.step) ?? []), s.advantage]);
    const stored = advantagePercentiles(db, runId);
    expect([...stored.keys()]).toEqual([...values.keys()]);
    for (const [step, list] of values) {
      expect(stored.get(step)?.n).toBe(list.length);
      close(
        stored.get(step)?.q,
        Array.from({ length: 101 }, (_, k) => percentile(list, k)),
      );
    }
  }
}

/** Later writes the triggers must follow: runs finishing, a best episode changing, a resume's deletes, errors. */
function mutate(db: StoreDb): void {
  db.update(trajectories)
    .set({ status: "done", finalScore: 1, baselineScore: 9, improvement: 8, validated: true, turnCount: 3 })
    .where(and(eq(trajectories.runId, 1), eq(trajectories.status, "running")))
    .run();
  const best = scanTaskSummary(db, 1)[0];
  db.update(trajectories)
    .set({ improvement: -50 })
    .where(
      and(
        eq(trajectories.runId, 1),
        eq(trajectories.task, best?.task ?? ""),
        eq(trajectories.improvement, 8),
      ),
    )
    .run();
  const dropped = db
    .select({ id: trajectories.rolloutId })
    .from(trajectories)
    .where(and(eq(trajectories.runId, 2), eq(trajectories.step, 3)));
  db.delete(turns)
    .where(and(eq(turns.runId, 2), inArray(turns.rolloutId, dropped)))
    .run();
  db.delete(trajectories)
    .where(and(eq(trajectories.runId, 2), eq(trajectories.step, 3)))
    .run();
  db.delete(samples)
    .where(and(eq(samples.runId, 2), eq(samples.step, 3)))
    .run();
  db.delete(steps)
    .where(and(eq(steps.runId, 2), eq(steps.step, 3)))
    .run();
  db.update(turns).set({ toolError: "timed out", parseError: null }).where(eq(turns.idx, 1)).run();
  db.update(turns).set({ evaluationError: null }).where(eq(turns.idx, 2)).run();
}

describe("step totals", () => {
  test("equal a full scan of the rows, as rows are written, updated and deleted", () => {
    const db = openStore(":memory:");
    fill(db, 1);
    expectTotalsMatchScan(db);
    expect(taskSummary(db, 1).length).toBeGreaterThan(1);
    expect(turnErrorsPerStep(db, 1).some((r) => (r.timeouts ?? 0) > 0)).toBe(true);
    mutate(db);
    expectTotalsMatchScan(db);
    expect(trajectoryStepStats(db, 2).map((r) => r.step)).toEqual([0, 1, 2]);
    expect([...advantagePercentiles(db, 2).keys()]).toEqual([0, 1, 2]);
  }, 300_000);

  test("a store written before the migration gets its totals backfilled, then kept", () => {
    // The migrations as they were before 0005: the same folder without it and the later ones.
    const before = join(dir, "drizzle-0004");
    cpSync(MIGRATIONS_DIR, before, { recursive: true });
    const journalPath = join(before, "meta", "_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8"));
    for (const e of journal.entries as Array<{ idx: number; tag: string }>)
      if (e.idx >= 5) rmSync(join(before, `${e.tag}.sql`));
    journal.entries = journal.entries.filter((e: { idx: number }) => e.idx < 5);
    writeFileSync(journalPath, JSON.stringify(journal));
    const path = join(dir, "old.db");
    const client = new Database(path, { create: true });
    const old = drizzle({ client, schema }) as StoreDb;
    migrate(old, { migrationsFolder: before });
    fill(old, 2);
    expect(client.query("SELECT name FROM sqlite_master WHERE name = 'step_totals'").get()).toBeNull();
    client.close();
    const reader = openStore(path, { readonly: true });
    try {
      expectTotalsMatchScan(reader);
    } finally {
      reader.$client.close();
    }
    const writer = openStore(path);
    mutate(writer);
    expectTotalsMatchScan(writer);
    writer.$client.close();
  }, 300_000);
});
