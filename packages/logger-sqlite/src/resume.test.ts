import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, eq } from "drizzle-orm";
import { openStore } from "./open.ts";
import { listRuns, runStatus, STALE_MS } from "./queries/index.ts";
import { logs, runs, samples, steps, trajectories, turns } from "./schema.ts";
import { runAndKill } from "./testing/kill.ts";
import { runFixture } from "./testing/run.ts";

const dir = mkdtempSync(join(tmpdir(), "air-resume-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function perStep(dbPath: string) {
  const db = openStore(dbPath, { readonly: true });
  try {
    const rows = db
      .select({ step: trajectories.step, rolloutId: trajectories.rolloutId, status: trajectories.status })
      .from(trajectories)
      .orderBy(asc(trajectories.step))
      .all();
    const count = new Map<number, number>();
    for (const r of rows) count.set(r.step, (count.get(r.step) ?? 0) + 1);
    return { rows, count };
  } finally {
    db.$client.close();
  }
}

test("kill -9 mid-step, then resume: one store run, the interrupted step recorded once, dead before, running after", async () => {
  const dbPath = await runAndKill(dir, 2, 60_000, 3);
  const killed = openStore(dbPath, { readonly: true });
  let lastDone: number;
  try {
    const run = killed.select().from(runs).get()!;
    expect(run.status).toBe("running");
    // Fresh now; with the heartbeat STALE_MS old the run shows as dead (its launcher is gone).
    expect(runStatus(killed, run.id, Date.now())!.state).toBe("running");
    expect(runStatus(killed, run.id, (run.heartbeatAt ?? 0) + STALE_MS + 1)!.state).toBe("dead");
    const finished = killed.select({ step: steps.step, endedAt: steps.endedAt }).from(steps).all();
    lastDone = Math.max(...finished.filter((s) => s.endedAt !== null).map((s) => s.step));
    // The kill lands mid-run: the step after the last finished one has rows already (partial or running).
    expect(perStep(dbPath).rows.some((r) => r.step > lastDone)).toBe(true);
  } finally {
    killed.$client.close();
  }
  const startStep = lastDone + 1;
  const resumed = await runFixture({ dir, name: "killed", maxSteps: startStep + 2, resume: { startStep } });
  expect(resumed.summary.status).toBe("completed");
  expect(resumed.dbPath).toBe(dbPath);

  const db = openStore(dbPath, { readonly: true });
  try {
    const all = db.select().from(runs).all();
    expect(all).toHaveLength(1);
    expect(all[0]!.status).toBe("completed");
    expect(all[0]!.resumes).toBe(1);
    expect(listRuns(db)[0]!.state).toBe("completed");
    // batch_size 4: every step holds exactly 4 trajectories, all finished, none doubled.
    const { rows, count } = perStep(dbPath);
    expect([...count.keys()]).toEqual(Array.from({ length: startStep + 2 }, (_, i) => i));
    for (const [, n] of count) expect(n).toBe(4);
    expect(rows.every((r) => r.status === "done")).toBe(true);
    expect(new Set(rows.map((r) => r.rolloutId)).size).toBe(rows.length);
    const stepRows = db.select().from(steps).where(eq(steps.runId, 1)).all();
    expect(stepRows.map((s) => s.step)).toEqual(Array.from({ length: startStep + 2 }, (_, i) => i));
    expect(stepRows.every((s) => s.endedAt !== null && s.trajectoryCount === 4)).toBe(true);
    // Samples and turns of the dropped attempt are gone too: each step's samples belong to its own trajectories.
    const sampleRows = db.select({ step: samples.step, rolloutId: samples.rolloutId }).from(samples).all();
    const stepOf = new Map(rows.map((r) => [r.rolloutId, r.step]));
    expect(sampleRows.every((s) => stepOf.get(s.rolloutId) === s.step)).toBe(true);
    const turnRollouts = db.select({ id: turns.rolloutId }).from(turns).all();
    expect(turnRollouts.every((t) => stepOf.has(t.id))).toBe(true);
    const turnCount = db.select({ n: trajectories.turnCount }).from(trajectories).all();
    expect(turnRollouts.length).toBe(turnCount.reduce((a, t) => a + t.n, 0));
    const messages = db
      .select({ message: logs.message })
      .from(logs)
      .all()
      .map((l) => l.message);
    expect(messages.some((m) => m.startsWith(`resumed at step ${startStep}: dropped `))).toBe(true);
  } finally {
    db.$client.close();
  }
}, 120_000);

test("a resume with nothing stored for the run dir starts a new store run", async () => {
  const run = await runFixture({
    dir: join(dir, "fresh"),
    name: "fresh",
    maxSteps: 3,
    resume: { startStep: 2 },
  });
  expect(run.summary.status).toBe("completed");
  const db = openStore(run.dbPath, { readonly: true });
  try {
    expect(db.select({ resumes: runs.resumes }).from(runs).all()).toEqual([{ resumes: 0 }]);
    expect([...perStep(run.dbPath).count.keys()]).toEqual([2]);
  } finally {
    db.$client.close();
  }
}, 60_000);

test("a resume over a file that is not a store fails naming it, and leaves the file as it was", async () => {
  const runDir = join(dir, "bad", "outputs", "bad");
  mkdirSync(runDir, { recursive: true });
  const junk = "not a database ".repeat(300);
  writeFileSync(join(runDir, "air.db"), junk);
  const run = await runFixture({ dir: join(dir, "bad"), name: "bad", maxSteps: 2, resume: { startStep: 1 } });
  expect(run.summary.status).toBe("failed");
  expect(run.summary.error).toContain(
    `cannot open the run store ${join(runDir, "air.db")}: file is not a database`,
  );
  expect(readFileSync(join(runDir, "air.db"), "utf8")).toBe(junk);
}, 60_000);
