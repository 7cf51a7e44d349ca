import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "./open.ts";
import { runStatus, type StatusTally } from "./queries/index.ts";
import { runs, trajectories } from "./schema.ts";

const dir = mkdtempSync(join(tmpdir(), "air-status-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a live stream's tally counts only the trajectory rows added since its last poll, and stays exact", () => {
  const db = openStore(join(dir, "air.db"));
  db.insert(runs)
    .values([
      { name: "a", startedAt: 0 },
      { name: "b", startedAt: 0 },
    ])
    .run();
  const add = (runId: number, from: number, n: number) => {
    for (let i = from; i < from + n; i++) {
      db.insert(trajectories)
        .values({ runId, rolloutId: `r${i}`, step: 0, exampleId: "e", task: "t", groupId: "g" })
        .run();
    }
  };
  add(1, 0, 5);
  add(2, 0, 3);
  const tally: StatusTally = { trajectories: 0, lastId: 0 };
  expect(runStatus(db, 1, Date.now(), tally)?.trajectories).toBe(5);
  const seen = tally.lastId;
  add(1, 5, 2);
  add(2, 3, 1);
  // An upsert of a known rollout (a rollout's end) adds no row and must not count twice.
  db.insert(trajectories)
    .values({ runId: 1, rolloutId: "r0", step: 0, exampleId: "e", task: "t", groupId: "g", status: "done" })
    .onConflictDoUpdate({ target: [trajectories.runId, trajectories.rolloutId], set: { status: "done" } })
    .run();
  const live = runStatus(db, 1, Date.now(), tally);
  expect(live?.trajectories).toBe(7);
  expect(live?.trajectories).toBe(runStatus(db, 1)?.trajectories);
  expect(tally.lastId).toBeGreaterThan(seen);
  db.$client.close();
});
