import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq, gte } from "drizzle-orm";
import { openStore, type StoreDb } from "./open.ts";
import { listTrajectories, SEARCH_INDEX_CAP, type TrajectoryFilter } from "./queries/trajectories.ts";
import { runs, trajectories, turns } from "./schema.ts";
import { SEARCH_SUFFIX, SearchIndex, trigramQuery } from "./search.ts";

const dir = mkdtempSync(join(tmpdir(), "air-search-"));

/**
 * The bound of a test that compares hundreds of searches with their scans: about 1 s on an idle 2-core machine,
 * up to 30 s beside 8 busy loops; a busy machine makes it slower, never red.
 */
const SCAN_COMPARISON_MS = 240_000;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WORDS = [
  "loss",
  "val_loss",
  "GBM",
  "xgboost",
  "50%",
  "naïve",
  'say "hi"',
  "épreuve",
  "Δt",
  "train.py",
  "a_b",
];

/** Two runs of trajectories whose turns hold random words, one error, and task/example names to match. */
function fill(db: StoreDb, runId: number, count: number, seed: number): void {
  let x = seed;
  const next = () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x;
  };
  const words = (n: number) => Array.from({ length: n }, () => WORDS[next() % WORDS.length]).join(" ");
  db.insert(runs)
    .values({ id: runId, name: `run${runId}`, startedAt: 0 })
    .onConflictDoNothing()
    .run();
  for (let i = 0; i < count; i++) {
    const rolloutId = `r${runId}-${seed}-${i}`;
    db.insert(trajectories)
      .values({
        runId,
        rolloutId,
        step: i % 4,
        exampleId: `ex${i % 3}`,
        task: i % 2 ? "titanic" : "houseprice",
        groupId: "g",
        status: "done",
        error: i === 3 ? "sandbox lost: connection reset" : null,
      })
      .run();
    for (let idx = 0; idx < 3; idx++)
      db.insert(turns)
        .values({
          runId,
          rolloutId,
          idx,
          promptMessagesJson: "[]",
          completion: `${words(4)} seed${seed}turn${i}x${idx}`,
          command: idx === 1 ? `python ${words(1)}` : null,
          observation: words(3),
        })
        .run();
  }
}

const TERMS = [
  "loss",
  "val_loss",
  "gbm",
  "GBM",
  "50%",
  "%",
  "_",
  "a_b",
  "naïve",
  'say "hi"',
  '"',
  "Δt",
  "épr",
  "train.py",
  "titan",
  "ex2",
  "connection reset",
  "seed7turn30x2",
  "seed9turn",
  "r1-7-1",
  "absent-term",
  "lo",
];

/** With and without the index, every term lists the same trajectories in the same order with the same total. */
function expectSameAsScan(db: StoreDb, index: SearchIndex): void {
  for (const runId of [1, 2])
    for (const q of TERMS)
      for (const extra of [{}, { task: "titanic" }, { sort: "reward" as const }]) {
        const filter: TrajectoryFilter = { page: 1, per: 200, sort: "step", q, ...extra };
        const scanned = listTrajectories(db, runId, filter);
        const indexed = listTrajectories(db, runId, filter, index);
        expect([q, indexed.total, indexed.rows.map((r) => r.rolloutId)]).toEqual([
          q,
          scanned.total,
          scanned.rows.map((r) => r.rolloutId),
        ]);
      }
}

test("trigram queries: every trigram of the term, quotes doubled; none under 3 characters", () => {
  expect(trigramQuery("gbm!")).toBe('"gbm" AND "bm!"');
  expect(trigramQuery('a"b')).toBe('"a""b"');
  expect(trigramQuery("Δt")).toBeNull();
  expect(trigramQuery("aaaa")).toBe('"aaa"');
});

test(
  "a search through the index finds what a LIKE scan finds, indexed or past the watermark",
  () => {
    const path = join(dir, "air.db");
    const db = openStore(path);
    fill(db, 1, 40, 7);
    fill(db, 2, 20, 9);
    const index = SearchIndex.open(path, { write: true });
    if (!index) throw new Error("no index");
    // Partly indexed: 50 turns and 50 trajectories, the rest is past the watermarks and scanned.
    expect(index.catchUp(db.$client, 50)).toBe(100);
    expect(index.watermarks().turns).toBe(50);
    expect(index.hits("seed7turn30x2", SEARCH_INDEX_CAP)?.turnRowids.length).toBe(0);
    expectSameAsScan(db, index);
    while (index.catchUp(db.$client, 50) > 0) {}
    // Caught up: the term's turn is a candidate now, and one more call has nothing to do (O(new rows)).
    expect(index.hits("seed7turn30x2", SEARCH_INDEX_CAP)?.turnRowids.length).toBe(1);
    expect(index.catchUp(db.$client)).toBe(0);
    expectSameAsScan(db, index);
    // A rare term is answered from its candidates; a common one (more than the cap) falls back to the scan.
    expect(index.hits("absent-term", SEARCH_INDEX_CAP)?.turnRowids).toEqual([]);
    expect(index.hits("loss", 10)).toBeNull();
    // New rows reach the index on the next catch-up, and a reader opened on the file sees them.
    fill(db, 1, 10, 11);
    expectSameAsScan(db, index);
    expect(index.catchUp(db.$client)).toBe(40);
    const reader = SearchIndex.open(path);
    expect(reader?.hits("seed11turn9x2", SEARCH_INDEX_CAP)?.turnRowids.length).toBe(1);
    reader?.close();
    expectSameAsScan(db, index);
    index.close();
    db.$client.close();
  },
  SCAN_COMPARISON_MS,
);

test(
  "turns deleted at the top and their rowids reused (a retried rollout) make the index start over",
  () => {
    const path = join(dir, "reuse.db");
    const db = openStore(path);
    fill(db, 1, 10, 3);
    const index = SearchIndex.open(path, { write: true });
    if (!index) throw new Error("no index");
    while (index.catchUp(db.$client) > 0) {}
    const top = "r1-3-9";
    db.delete(turns)
      .where(and(eq(turns.rolloutId, top), gte(turns.idx, 0)))
      .run();
    db.insert(turns)
      .values(
        [0, 1, 2].map((idx) => ({
          runId: 1,
          rolloutId: top,
          idx,
          promptMessagesJson: "[]",
          completion: `retried zebra ${idx}`,
          observation: "",
        })),
      )
      .run();
    expect(index.catchUp(db.$client)).toBe(30);
    expect(index.hits("zebra", SEARCH_INDEX_CAP)?.turnRowids.length).toBe(3);
    expectSameAsScan(db, index);
    index.close();
    db.$client.close();
  },
  SCAN_COMPARISON_MS,
);

test("an index file whose tables are not committed yet (its writer is creating it) is no index: a search scans", () => {
  const path = join(dir, "early.db");
  const db = openStore(path);
  fill(db, 1, 6, 5);
  // What a reader finds between the writer creating the file and committing its tables.
  const early = new Database(path + SEARCH_SUFFIX, { create: true, readwrite: true });
  early.exec("PRAGMA journal_mode = WAL");
  early.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value)");
  const reader = SearchIndex.open(path);
  expect(reader).toBeNull();
  const filter: TrajectoryFilter = { page: 1, per: 50, sort: "step", q: "seed5turn4x1" };
  expect(listTrajectories(db, 1, filter, reader).rows.map((r) => r.rolloutId)).toEqual(["r1-5-4"]);
  early.close();
  // Once the writer has committed the tables, a reader gets the index (empty: everything is past its watermark).
  const writer = SearchIndex.open(path, { write: true });
  const ready = SearchIndex.open(path);
  expect(ready?.watermarks()).toEqual({ turns: 0, trajectories: 0 });
  expect(listTrajectories(db, 1, filter, ready).rows.map((r) => r.rolloutId)).toEqual(["r1-5-4"]);
  ready?.close();
  writer?.close();
  db.$client.close();
});
