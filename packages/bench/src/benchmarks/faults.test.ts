import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { outcomeRow } from "./faults-rows.ts";
import { checkStore, runCounts, trainCheck } from "./faults-run.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A run dir whose air.db has the columns the fault bench reads, with `rows` as [step, rollout id, failed]. */
function runDir(rows: Array<[number, string, boolean]>, split: string | null = "train"): string {
  const dir = mkdtempSync(join(tmpdir(), "air-bench-faults-test-"));
  dirs.push(dir);
  const db = new Database(join(dir, "air.db"));
  db.run("CREATE TABLE runs (status TEXT)");
  db.run("INSERT INTO runs VALUES ('completed')");
  db.run("CREATE TABLE trajectories (step INTEGER, rollout_id TEXT, stop_reason TEXT, split TEXT)");
  db.run("CREATE TABLE steps (step INTEGER, sample_count INTEGER)");
  for (const [step, id, failed] of rows)
    db.run("INSERT INTO trajectories VALUES (?, ?, ?, ?)", [step, id, failed ? "failed" : "stop", split]);
  const steps = new Set(rows.map(([s]) => s));
  for (const s of steps) db.run("INSERT INTO steps VALUES (?, ?)", [s, 2]);
  db.close();
  return dir;
}

describe("fault bench: what counts as lost, doubled, trained twice", () => {
  test("a failed rollout is recorded, not lost; a missing one is lost; one in two steps is doubled", () => {
    const full = runDir([
      [0, "a", false],
      [0, "b", true],
      [1, "c", false],
      [1, "d", false],
    ]);
    expect(checkStore(full, 2, 2)).toMatchObject({
      lost: 0,
      doubled: 0,
      failed: 1,
      runs: 1,
      integrity: "ok",
    });
    const holes = runDir([
      [0, "a", false],
      [1, "a", false],
      [1, "c", false],
      [1, "d", false],
    ]);
    // step 0 misses one, step 1 has one too many, rollout a is in two steps, step 2 never ran
    expect(checkStore(holes, 2, 3)).toMatchObject({ lost: 1 + 2, doubled: 1 + 1 });
    // a run that stopped early is checked up to its last recorded step
    expect(checkStore(holes, 2).lost).toBe(1);
  });

  test("eval rollouts are not training rollouts", () => {
    expect(checkStore(runDir([[0, "e", false]], "eval"), 2, 1).lost).toBe(2);
  });

  test("trained twice and never from the trainer's metrics.jsonl", () => {
    const dir = mkdtempSync(join(tmpdir(), "air-bench-faults-test-"));
    dirs.push(dir);
    mkdirSync(join(dir, "prime-rl"));
    const rows = [1, 2, 2, 4].map((step) => JSON.stringify({ step })).join("\n");
    writeFileSync(join(dir, "prime-rl", "metrics.jsonl"), `${rows}\n`);
    expect(trainCheck(dir, 4)).toEqual({ twice: 1, never: 1 });
  });

  test("an outcome's counts: the store's lost and doubled (batches of 8), the trainer's twice and never", () => {
    const ids = (step: number, n: number) =>
      Array.from({ length: n }, (_, i): [number, string, boolean] => [step, `${step}-${i}`, false]);
    const dir = runDir([...ids(0, 8), ...ids(1, 7)]);
    mkdirSync(join(dir, "prime-rl"));
    writeFileSync(
      join(dir, "prime-rl", "metrics.jsonl"),
      `${JSON.stringify({ step: 1 })}\n${JSON.stringify({ step: 1 })}\n`,
    );
    const { store, counts } = runCounts(dir, 2);
    expect(counts).toEqual({ lost: 1, doubled: 0, trainedTwice: 1, untrained: 1 });
    expect(store.stepsWithSamples).toBe(2);
  });

  test("a row sums what its runs left and lost, and counts the runs that ended as the goal says", () => {
    const row = outcomeRow("fault", [
      { expected: true, left: [], lost: 0, doubled: 0, trainedTwice: 0, untrained: 0, detail: "exit 0" },
      { expected: false, left: ["pid 7 (inference)"], lost: 3, doubled: 1, detail: "exit 1" },
    ]);
    expect(row).toEqual(["fault", "2", "1 of 2", "1: pid 7 (inference)", "3 / 1", "0 / 0", "exit 0; exit 1"]);
    expect(outcomeRow("f", [{ expected: true, left: [], detail: "x" }])[4]).toBe("– / –");
  });
});
