import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "@air/logger-sqlite";
import { SearchIndex } from "@air/logger-sqlite/read";
import { createApp } from "./app.ts";

const dir = mkdtempSync(join(tmpdir(), "air-viz-search-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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

/** Polls until the dashboard's worker has indexed every turn of the store (or fails after 30 s). */
async function indexedUpTo(path: string, rowid: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const index = SearchIndex.open(path);
    const turns = index?.watermarks().turns ?? 0;
    index?.close();
    if (turns >= rowid) return;
    await Bun.sleep(50);
  }
  throw new Error(`the search worker did not index ${path} up to turn ${rowid} within 30 s`);
}

const listed = (body: string) => [...body.matchAll(/trajectories\/(r\d+)"/g)].map((m) => m[1]);

test("the dashboard's worker builds the search index and keeps it caught up; searches use it", async () => {
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
}, 60_000);
