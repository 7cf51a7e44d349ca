import { describe, expect, test } from "bun:test";
import { openStore, type StoreDb } from "../open.ts";
import { metrics, runs, steps, trajectories, turns, warnings } from "../schema.ts";
import { flatRewardRows } from "./flat.ts";
import { getRun, listRuns, runStatus } from "./runs.ts";
import { taskSummary, trajectoryStepStats, turnErrorsPerStep } from "./totals.ts";
import { listTrajectories } from "./trajectories.ts";

type Trajectory = typeof trajectories.$inferInsert;

function store(): StoreDb {
  const db = openStore(":memory:");
  db.insert(runs)
    .values([
      { name: "first", startedAt: 1 },
      { name: "second", startedAt: 2, status: "completed" },
    ])
    .run();
  db.insert(steps)
    .values([
      { runId: 2, step: 0, startedAt: 10, endedAt: 20 },
      { runId: 2, step: 1, startedAt: 20 },
    ])
    .run();
  db.insert(metrics)
    .values([
      { runId: 2, step: 0, name: "reward/mean", value: 0.25 },
      { runId: 2, step: 1, name: "reward/mean", value: 0.75 },
      { runId: 2, step: 1, name: "reward/std", value: 0 },
    ])
    .run();
  const t = (rolloutId: string, fields: Partial<Trajectory>): Trajectory => ({
    runId: 2,
    rolloutId,
    step: 0,
    exampleId: "e",
    task: "rmse",
    groupId: "0:e",
    status: "done",
    ...fields,
  });
  db.insert(trajectories)
    .values([
      // A minimized metric: the most improved episode has the lowest final score.
      t("a", { finalScore: 3, baselineScore: 5, improvement: 2, reward: 1, validated: true }),
      t("b", { finalScore: 4, baselineScore: 5, improvement: 1, reward: null, validated: false }),
      t("c_100%", { status: "running", step: 1 }),
      t("d", { status: "failed", step: 1, error: "boom" }),
    ])
    .run();
  const turn = (rolloutId: string, idx: number, toolError: string | null, observation = "") => ({
    runId: 2,
    rolloutId,
    idx,
    promptMessagesJson: "[]",
    completion: `reply ${idx}`,
    observation,
    toolError,
  });
  db.insert(turns)
    .values([
      turn("a", 0, null, "plain 50% done"),
      turn("a", 1, "command timed out after 30 s"),
      turn("b", 0, null),
      turn("c_100%", 0, null),
      turn("c_100%", 1, null),
    ])
    .run();
  db.insert(warnings).values({ runId: 2, step: 1, message: "all groups have zero reward variance" }).run();
  return db;
}

describe("read API", () => {
  test("listRuns: newest first, finished steps only, the last reward/mean", () => {
    const rows = listRuns(store());
    expect(rows.map((r) => [r.id, r.name, r.stepCount, r.trajectoryCount, r.lastReward])).toEqual([
      [2, "second", 1, 4, 0.75],
      [1, "first", 0, 0, null],
    ]);
  });

  test("runStatus: a version that moves with every new turn row; undefined for an unknown run", () => {
    const db = store();
    const before = runStatus(db, 2)!;
    expect(before).toMatchObject({ lastStep: 0, trajectories: 4, status: "completed" });
    db.insert(turns)
      .values({
        runId: 2,
        rolloutId: "c_100%",
        idx: 2,
        promptMessagesJson: "[]",
        completion: "",
        observation: "",
      })
      .run();
    expect(runStatus(db, 2)!.version).not.toBe(before.version);
    expect(runStatus(db, 9)).toBeUndefined();
    expect(getRun(db, 9)).toBeUndefined();
  });

  test("taskSummary: best final is the final score of the most improved episode", () => {
    const [row] = taskSummary(store(), 2);
    expect(row).toEqual({
      task: "rmse",
      episodes: 3,
      baseline: 5,
      avgFinal: 3.5,
      bestFinal: 3,
      avgImprovement: 1.5,
      bestImprovement: 2,
      validateRate: 0.5,
      avgReward: 1,
    });
  });

  test("listTrajectories: filters, literal % in a search, reply search, nulls last", () => {
    const db = store();
    const list = (f: Partial<Parameters<typeof listTrajectories>[2]>) =>
      listTrajectories(db, 2, { page: 1, per: 50, sort: "step", ...f }).rows.map((r) => r.rolloutId);
    expect(list({})).toEqual(["d", "c_100%", "b", "a"]);
    expect(list({ q: "100%" })).toEqual(["c_100%"]);
    expect(list({ q: "50%" })).toEqual(["a"]);
    expect(list({ q: "_" })).toEqual(["c_100%"]);
    expect(list({ q: "boom" })).toEqual(["d"]);
    expect(list({ validated: "no" })).toEqual(["d", "c_100%", "b"]);
    expect(list({ validated: "yes", status: "done" })).toEqual(["a"]);
    expect(list({ sort: "reward" })).toEqual(["a", "d", "c_100%", "b"]);
    const turnCounts = listTrajectories(db, 2, { page: 1, per: 50, sort: "step" }).rows.map(
      (r) => r.turnCount,
    );
    expect(turnCounts).toEqual([0, 2, 0, 0]);
    const page = listTrajectories(db, 2, { page: 2, per: 3, sort: "step" });
    expect([page.total, page.pages, page.rows.length, page.tasks]).toEqual([4, 2, 1, ["rmse"]]);
  });

  test("per-step series keep their nulls: no timeout point for a step without any tool error", () => {
    const db = store();
    expect(turnErrorsPerStep(db, 2).map((r) => [r.step, r.tool, r.timeouts])).toEqual([
      [0, 1, 1],
      [1, 0, null],
    ]);
    expect(trajectoryStepStats(db, 2).map((r) => [r.step, r.count, r.failed, r.validateRate])).toEqual([
      [0, 2, 0, 0.5],
      [1, 1, 1, null],
    ]);
  });

  test("flatRewardRows: newest step first; timeouts scanned from turns when core did not count them", () => {
    const rows = flatRewardRows(store(), 2);
    expect(rows.map((r) => [r.step, r.metrics["reward/mean"], r.timeouts, r.warnings])).toEqual([
      [1, 0.75, 0, ["all groups have zero reward variance"]],
      [0, 0.25, 1, []],
    ]);
  });
});
