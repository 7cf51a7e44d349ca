import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "./open.ts";
import { readTrajectory } from "./read.ts";
import { runs, trajectories, turns } from "./schema.ts";

const dir = mkdtempSync(join(tmpdir(), "air-open-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
  writer.$client.exec("ALTER TABLE turns DROP COLUMN prompt_from_previous");
  writer.$client.exec(
    "DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)",
  );
  writer.$client.close();
  const reader = openStore(path, { readonly: true });
  try {
    // Check the column itself: SQLite reads a quoted name it cannot resolve as a string literal, so a select
    // of a missing column would not fail.
    const columns = reader.$client.query("SELECT name FROM pragma_table_info('turns')").all();
    expect(columns).toContainEqual({ name: "prompt_from_previous" });
    const t = readTrajectory(reader, 1, "r");
    expect(t?.turns.map((x) => [x.completion, x.promptFromPrevious])).toEqual([["c", false]]);
  } finally {
    reader.$client.close();
  }
});

test("a read-only open of a file that is not a store still fails clearly", () => {
  expect(() => openStore(join(dir, "missing.db"), { readonly: true })).toThrow(/no run store/);
});
