import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { openStore, type StoreDb } from "../open.ts";
import { turns } from "../schema.ts";
import { runFixture } from "../testing/run.ts";
import { flaggedTrajectoryIds, listTrajectories } from "./trajectories.ts";

/** The "flagged only" list reads the partial index of flagged turns (migration 0006), never every turn's JSON. */
const dir = mkdtempSync(join(tmpdir(), "air-flagged-"));
let db: StoreDb;

beforeAll(async () => {
  const run = await runFixture({ dir, maxSteps: 2 });
  db = openStore(run.dbPath);
}, 60_000);

afterAll(() => {
  db?.$client.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the flagged filter lists exactly the trajectories with a flagged turn, through turns_run_flagged", () => {
  const all = db.select().from(turns).all();
  const flagged = [all[0], all[all.length - 1]].map((t) => t!);
  for (const t of flagged)
    db.update(turns)
      .set({ infoJson: JSON.stringify({ tamper: ["score-jump"] }) })
      .where(
        sql`${turns.runId} = ${t.runId} AND ${turns.rolloutId} = ${t.rolloutId} AND ${turns.idx} = ${t.idx}`,
      )
      .run();
  db.update(turns)
    .set({ infoJson: JSON.stringify({ tamper: [] }) })
    .where(eq(turns.rolloutId, all[1]!.rolloutId))
    .run();
  const listed = listTrajectories(db, 1, { page: 1, per: 50, sort: "step", flagged: "yes" });
  const expected = [...new Set(flagged.map((t) => t.rolloutId))].sort();
  expect(listed.rows.map((r) => r.rolloutId).sort()).toEqual(expected);
  expect(listed.total).toBe(expected.length);
  for (const row of listed.rows)
    expect(row.flaggedTurns).toBe(flagged.filter((t) => t.rolloutId === row.rolloutId).length);
  const plan = db.all<{ detail: string }>(sql`EXPLAIN QUERY PLAN ${flaggedTrajectoryIds(1)}`);
  expect(plan.map((p) => p.detail).join("\n")).toContain("USING INDEX turns_run_flagged");
});
