import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { openStore, type StoreDb } from "./open.ts";
import { readTrajectory } from "./read.ts";
import { RunRecorder } from "./recorder.ts";
import {
  metrics,
  processes,
  runs,
  samples,
  sandboxes,
  steps,
  trajectories,
  turns,
  warnings,
} from "./schema.ts";
import { runFixture } from "./testing/run.ts";

let dir: string;
let db: StoreDb;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "air-sqlite-"));
  const { summary, dbPath } = await runFixture({ dir, maxSteps: 3 });
  expect(summary.status).toBe("completed");
  db = openStore(dbPath, { readonly: true });
});
afterAll(() => {
  db?.$client.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("sqlite logger over a real run", () => {
  test("records the run, its steps and every rollout", () => {
    const run = db.select().from(runs).get()!;
    expect(run.name).toBe("fixture");
    expect(run.status).toBe("completed");
    expect(JSON.parse(run.configJson!).orchestrator.batch_size).toBe(4);
    expect(
      db
        .select()
        .from(steps)
        .all()
        .map((s) => s.step),
    ).toEqual([0, 1, 2]);
    const all = db.select().from(trajectories).all();
    expect(all).toHaveLength(12);
    expect(all.every((t) => t.status === "done" && t.turnCount === 6)).toBe(true);
    expect(db.select().from(turns).all()).toHaveLength(72);
  });

  test("stores turns with rewards, scores, errors, token counts and rebuilds prompts", () => {
    const t = readTrajectory(db, 1, "s0-r1")!;
    expect(t.turns).toHaveLength(6);
    expect(t.turns[1]!.parseError).toBe("no ``` block found");
    expect(t.turns[1]!.command).toBeNull();
    const validate = t.turns[2]!;
    expect(validate.stepKind).toBe("validate");
    const score = validate.scores?.Score ?? Number.NaN;
    expect(score).toBeGreaterThan(0.3);
    expect(validate.reward).toBeCloseTo(score - 0.5, 6);
    expect(validate.rewardBreakdown?.["score-gain"]).toBeCloseTo(validate.reward ?? Number.NaN, 6);
    expect(validate.completionTokens).toBe(6);
    expect(validate.logprobMean).toBeCloseTo(-0.5, 6);
    expect(t.turns[3]!.prompt).toHaveLength(2 + 3 * 2);
    expect(t.turns[3]!.prompt[6]!.content).toBe(t.turns[2]!.completion);
    expect(t.turns[3]!.promptBase).toBe(6);
    const full = db
      .select()
      .from(turns)
      .where(and(eq(turns.rolloutId, "s0-r1"), eq(turns.idx, 3)))
      .get()!;
    // Its new messages are turn 2's reply and observation: stored as a reference, not a second copy.
    expect(full.promptFromPrevious).toBe(true);
    expect(full.promptMessagesJson).toBe("[]");
    expect(t.turns[3]!.prompt.slice(6)).toEqual([
      { role: "assistant", content: t.turns[2]!.completion },
      { role: "user", content: t.turns[2]!.observation },
    ]);
  });

  test("summarises scores against the baseline", () => {
    const t = readTrajectory(db, 1, "s2-r8")!;
    expect(t.trajectory.baselineScore).toBe(0.5);
    expect(t.validationHistory.map((p) => p.turn)).toEqual([2, 4, 5]);
    expect(t.trajectory.finalScore).toBe(t.validationHistory.at(-1)!.score);
    expect(t.trajectory.improvement).toBeCloseTo(t.trajectory.finalScore! - 0.5, 9);
    expect(t.trajectory.validated).toBe(true);
  });

  test("stores step metrics, trainer metrics, samples and warnings", () => {
    const m = db.select().from(metrics).all();
    const reward = m.filter((x) => x.name === "reward/mean" && x.source === "step");
    expect(reward.map((x) => x.step)).toEqual([0, 1, 2]);
    const loss = m.filter((x) => x.name === "loss").map((x) => [x.step, x.value, x.source]);
    expect(loss).toEqual([
      [0, 1, "trainer"],
      [1, 0.5, "trainer"],
      [2, 1 / 3, "trainer"],
    ]);
    const s = db.select().from(samples).where(eq(samples.step, 1)).all();
    expect(s).toHaveLength(24);
    expect(s.every((x) => x.lossTokens >= 4 && x.tokens > x.lossTokens)).toBe(true);
    expect(db.select().from(warnings).all().length).toBeGreaterThanOrEqual(0);
  });

  test("keeps process and sandbox states for the system page", () => {
    expect(db.select().from(processes).get()!.state).toBe("exited");
    const boxes = db.select().from(sandboxes).all();
    expect(boxes).toHaveLength(12);
    expect(boxes.every((b) => b.state === "removed")).toBe(true);
  });
});

describe("sandbox hosts", () => {
  test("a sandbox's Docker host is stored with its state (the system page groups by it)", async () => {
    const store = openStore(join(dir, "hosts.db"));
    const recorder = new RunRecorder(store, { flushRows: 1, flushMs: 10, heartbeatMs: 0 });
    await recorder.hooks["sandbox:state"]({ id: "c1", state: "running", host: "tcp://10.0.0.2:2376" });
    await recorder.hooks["sandbox:state"]({ id: "c2", state: "running" });
    recorder.close();
    const reader = openStore(join(dir, "hosts.db"), { readonly: true });
    const rows = reader.select().from(sandboxes).all();
    expect(rows.find((r) => r.sandboxId === "c1")?.host).toBe("tcp://10.0.0.2:2376");
    expect(rows.find((r) => r.sandboxId === "c2")?.host).toBeNull();
    reader.$client.close();
  });
});
