import type { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "./open.ts";
import { readTrajectory } from "./read.ts";
import { runs, trajectories, turns } from "./schema.ts";

const dir = mkdtempSync(join(tmpdir(), "air-open-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Makes a fresh store look like one written when only the first `keep` migrations existed. */
function downgrade(client: Database, keep: number): void {
  if (keep < 8) client.exec("DROP TABLE turn_resume");
  if (keep < 7) client.exec("DROP INDEX turns_run_flagged");
  if (keep < 6) {
    const triggers = client.query("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as Array<{
      name: string;
    }>;
    for (const { name } of triggers) client.exec(`DROP TRIGGER \`${name}\``);
    for (const table of ["step_totals", "step_advantages", "percentile_points"])
      client.exec(`DROP TABLE ${table}`);
    for (const name of ["split_step", "error"]) client.exec(`DROP INDEX trajectories_run_${name}`);
  }
  if (keep < 5) {
    for (const name of ["group", "reward", "improvement", "final_score"])
      client.exec(`DROP INDEX trajectories_run_${name}`);
  }
  if (keep < 4) client.exec("ALTER TABLE sandboxes DROP COLUMN host");
  if (keep < 3) {
    client.exec("ALTER TABLE runs DROP COLUMN heartbeat_at");
    client.exec("ALTER TABLE runs DROP COLUMN resumes");
    client.exec("ALTER TABLE trajectories DROP COLUMN split");
  }
  if (keep < 2) client.exec("ALTER TABLE turns DROP COLUMN prompt_from_previous");
  client.exec(
    `DELETE FROM __drizzle_migrations WHERE created_at NOT IN (SELECT created_at FROM __drizzle_migrations ORDER BY created_at LIMIT ${keep})`,
  );
}

test("the dashboard's read-only open migrates a store written before the latest migration", () => {
  const path = join(dir, "old.db");
  const writer = openStore(path);
  writer.insert(runs).values({ name: "old", startedAt: 0 }).run();
  writer
    .insert(trajectories)
    .values({ runId: 1, rolloutId: "r", step: 0, exampleId: "e", task: "t", groupId: "g" })
    .run();
  writer
    .insert(turns)
    .values({ runId: 1, rolloutId: "r", idx: 0, promptMessagesJson: "[]", completion: "c", observation: "o" })
    .run();
  // What an air.db from before migration 0001 looks like: no prompt_from_previous, one migration recorded.
  downgrade(writer.$client, 1);
  writer.$client.close();
  const reader = openStore(path, { readonly: true });
  try {
    // Check the column itself: SQLite reads a quoted name it cannot resolve as a string literal, so a select
    // of a missing column would not fail.
    const columns = reader.$client.query("SELECT name FROM pragma_table_info('turns')").all();
    expect(columns).toContainEqual({ name: "prompt_from_previous" });
    // Migration 0004: the dashboard's indexes for large runs.
    const indexes = reader.$client.query("SELECT name FROM pragma_index_list('trajectories')").all();
    expect(indexes).toContainEqual({ name: "trajectories_run_group" });
    expect(indexes).toContainEqual({ name: "trajectories_run_reward" });
    const t = readTrajectory(reader, 1, "r");
    expect(t?.turns.map((x) => [x.completion, x.promptFromPrevious])).toEqual([["c", false]]);
  } finally {
    reader.$client.close();
  }
});

test("migration 0002: an older store gains split (its eval rollouts marked eval), heartbeat_at and resumes", () => {
  const path = join(dir, "v0001.db");
  const writer = openStore(path);
  writer.insert(runs).values({ name: "old", startedAt: 0 }).run();
  const rows: Array<[string, string]> = [
    ["s0-r0", "0:ex"],
    ["e0-r1", "eval:0:ex"],
  ];
  for (const [rolloutId, groupId] of rows)
    writer
      .insert(trajectories)
      .values({ runId: 1, rolloutId, step: 0, exampleId: "ex", task: "t", groupId })
      .run();
  downgrade(writer.$client, 2);
  writer.$client.close();
  const reader = openStore(path, { readonly: true });
  try {
    const rows = reader
      .select({ id: trajectories.rolloutId, split: trajectories.split })
      .from(trajectories)
      .all();
    expect(rows).toEqual([
      { id: "s0-r0", split: "train" },
      { id: "e0-r1", split: "eval" },
    ]);
    expect(reader.select({ resumes: runs.resumes, heartbeatAt: runs.heartbeatAt }).from(runs).all()).toEqual([
      { resumes: 0, heartbeatAt: null },
    ]);
  } finally {
    reader.$client.close();
  }
});

test("a read-only open of a file that is not a store still fails clearly", () => {
  expect(() => openStore(join(dir, "missing.db"), { readonly: true })).toThrow(/no run store/);
});
