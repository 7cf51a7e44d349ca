import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "@air/logger-sqlite";
import { SEARCH_SUFFIX, SearchIndex } from "@air/logger-sqlite/read";
import { createApp } from "./app.ts";

const dir = mkdtempSync(join(tmpdir(), "air-viz-search-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How long the worker may take to index these few hundred turns: well under 1 s idle, seconds under load. */
const INDEX_WAIT_MS = 120_000;
/** A test's bound: its index waits and its requests, on a machine as busy as CI's can be. */
const TEST_MS = 3 * INDEX_WAIT_MS;

/** Writes `count` trajectories of 2 turns; the turn of trajectory `rare` holds the word "quokka". */
function write(path: string, from: number, count: number, rare: number): void {
  const db = openStore(path);
  const c = db.$client;
  c.run("INSERT OR IGNORE INTO runs (id, name, status, started_at) VALUES (1, 'run', 'running', 0)");
  for (let i = from; i < from + count; i++) {
    c.run(
      "INSERT INTO trajectories (run_id, rollout_id, step, example_id, task, group_id, status) VALUES (1, ?, 0, 'e', 't', 'g', 'done')",
      [`r${i}`],
    );
    for (const idx of [0, 1])
      c.run(
        "INSERT INTO turns (run_id, rollout_id, idx, prompt_messages_json, completion, observation) VALUES (1, ?, ?, '[]', ?, 'ok')",
        [`r${i}`, idx, i === rare && idx === 1 ? "I saw a quokka" : "python train.py"],
      );
  }
  c.close();
}

/** Polls until the dashboard's worker has indexed the store's turns up to `rowid` (or fails after INDEX_WAIT_MS). */
async function indexedUpTo(path: string, rowid: number): Promise<void> {
  const deadline = Date.now() + INDEX_WAIT_MS;
  while (Date.now() < deadline) {
    const index = SearchIndex.open(path);
    const turns = index?.watermarks().turns ?? 0;
    index?.close();
    if (turns >= rowid) return;
    await Bun.sleep(50);
  }
  throw new Error(`the search worker did not index ${path} up to turn ${rowid} within ${INDEX_WAIT_MS} ms`);
}

const listed = (body: string) => [...body.matchAll(/trajectories\/(r\d+)"/g)].map((m) => m[1]);

test(
  "the dashboard's worker builds the search index and keeps it caught up; searches use it",
  async () => {
    const path = join(dir, "air.db");
    write(path, 0, 300, 123);
    const app = createApp(path, { searchIndexMs: 50 });
    try {
      await indexedUpTo(path, 600);
      expect(listed(await (await app.request("/runs/1/trajectories?q=quokka")).text())).toEqual(["r123"]);
      // Rows written while the dashboard runs are indexed on its next pass (found before that by the scan of the tail).
      write(path, 300, 10, 305);
      expect(listed(await (await app.request("/runs/1/trajectories?q=quokka")).text())).toEqual([
        "r305",
        "r123",
      ]);
      await indexedUpTo(path, 620);
      const index = SearchIndex.open(path);
      expect(index?.hits("quokka", 100)?.turnRowids.length).toBe(2);
      index?.close();
      expect(listed(await (await app.request("/runs/1/trajectories?q=QUOKKA")).text())).toEqual([
        "r305",
        "r123",
      ]);
    } finally {
      app.close();
    }
  },
  TEST_MS,
);

/** The rollouts a dashboard search lists, failing on any answer but 200. */
async function search(app: ReturnType<typeof createApp>, q: string) {
  const res = await app.request(`/runs/1/trajectories?q=${q}`);
  const body = await res.text();
  expect([res.status, body.slice(0, 200)]).toEqual([200, expect.any(String)]);
  return listed(body);
}

test(
  "a search before the index has its tables, or while the worker builds it, answers from the scan",
  async () => {
    const path = join(dir, "early.db");
    write(path, 0, 300, 42);
    // The index file as its creator leaves it before committing the tables; no worker of this dashboard.
    const early = new Database(path + SEARCH_SUFFIX, { create: true, readwrite: true });
    early.exec("PRAGMA journal_mode = WAL");
    const idle = createApp(path, { searchIndexMs: 0 });
    try {
      expect(await search(idle, "quokka")).toEqual(["r42"]);
    } finally {
      idle.close();
      early.close();
    }
    // A dashboard with its worker, searched from its first moment until the worker has indexed every turn.
    for (const suffix of ["", "-wal", "-shm"]) rmSync(path + SEARCH_SUFFIX + suffix, { force: true });
    const app = createApp(path, { searchIndexMs: 50 });
    try {
      const deadline = Date.now() + INDEX_WAIT_MS;
      let searches = 0;
      for (;;) {
        expect(await search(app, "quokka")).toEqual(["r42"]);
        searches++;
        const index = SearchIndex.open(path);
        const done = (index?.watermarks().turns ?? 0) >= 600;
        index?.close();
        if (done) break;
        if (Date.now() > deadline)
          throw new Error(`the worker did not index ${path} within ${INDEX_WAIT_MS} ms`);
      }
      expect(searches).toBeGreaterThan(0);
    } finally {
      app.close();
    }
  },
  TEST_MS,
);
