import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message, Turn } from "@air/core";
import { makeTrajectory, makeTurn } from "@air/core/testing";
import { asc, eq } from "drizzle-orm";
import { openStore } from "./open.ts";
import { RunRecorder } from "./recorder.ts";
import { evaluations, logs, metrics, trajectories, turnResume, turns } from "./schema.ts";

const dir = mkdtempSync(join(tmpdir(), "air-eval-resume-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const initial: Message[] = [{ role: "user", content: "task" }];
const options = { flushRows: 1000, flushMs: 60_000, heartbeatMs: 0 };

/** Plays rollout `id` of `step` into `recorder`: `points` turns with a resume point, then `bare` without. */
function play(
  recorder: RunRecorder,
  id: string,
  step: number,
  split: "train" | "eval",
  turnsWith: { points: number; bare?: number; end?: "max_turns" },
): Turn[] {
  const example = id.endsWith("r2") || id.endsWith("r3") ? "v0" : "v1";
  const groupId = split === "eval" ? `eval:${step}:${example}` : `${step}:${example}`;
  recorder.hooks["rollout:start"]({
    rolloutId: id,
    exampleId: example,
    task: "t",
    groupId,
    step,
    policyVersion: step + 1,
    attempt: 0,
    split,
  });
  const played: Turn[] = [];
  for (let i = 0; i < turnsWith.points + (turnsWith.bare ?? 0); i++) {
    const turn = makeTurn({ index: i, completionText: `${id} reply ${i}`, observation: `${id} obs ${i}` });
    played.push(turn);
    const point =
      i < turnsWith.points
        ? { state: { n: i }, done: false, ...(i === 0 ? { initialMessages: initial } : {}) }
        : undefined;
    recorder.hooks["turn:end"]({ rolloutId: id, step, turn, ...(point ? { point } : {}) });
  }
  if (turnsWith.end)
    recorder.hooks["rollout:end"]({
      trajectory: makeTrajectory({ id, step, groupId, split, stopReason: turnsWith.end, turns: played }),
    });
  return played;
}

function evalEnd(recorder: RunRecorder, step: number, ids: string[]): void {
  recorder.hooks["eval:end"]({
    step,
    policyVersion: step + 1,
    trajectories: ids.map((id) => makeTrajectory({ id, step, split: "eval" })),
    metrics: { "eval/rollouts": ids.length, "eval/reward/mean": 0.5, "eval/t/reward/mean": 0.5 },
  });
}

test("resume after a kill during the eval after step 1: its resumable rollouts are kept, the rest of it dropped, earlier evals untouched; its rerun's eval:end lands once and at once", () => {
  const file = join(dir, "air.db");
  const first = new RunRecorder(openStore(file), options, { name: "r", runDir: dir });
  play(first, "s0-r0", 0, "train", { points: 2, end: "max_turns" });
  play(first, "e0-r9", 0, "eval", { points: 2, end: "max_turns" });
  evalEnd(first, 0, ["e0-r9"]);
  play(first, "s1-r0", 1, "train", { points: 2, end: "max_turns" });
  first.hooks["weights:updated"]({ weights: { version: 2 }, metrics: {} });
  // the eval after step 1, killed mid-way: r2 in flight, r3 ended, r4 recorded without points, r5 just started
  const inFlight = play(first, "e1-r2", 1, "eval", { points: 2 });
  play(first, "e1-r3", 1, "eval", { points: 1, end: "max_turns" });
  play(first, "e1-r4", 1, "eval", { points: 0, bare: 1 });
  play(first, "e1-r5", 1, "eval", { points: 0 });
  first.writer.flush();
  first.db.$client.close(); // kill -9

  const second = new RunRecorder(openStore(file), options, {
    name: "r",
    runDir: dir,
    resume: { startStep: 2, rollouts: true },
  });
  expect(second.evalRecorded(0)).toBe(true);
  expect(second.evalRecorded(1)).toBe(false);
  expect(second.continued?.kept).toEqual(["e1-r2", "e1-r3"]);
  expect(second.continued?.cutShortEval).toEqual({ step: 1, dropped: 2, kept: 2 });
  const ids = () =>
    second.db
      .select({ id: trajectories.rolloutId })
      .from(trajectories)
      .orderBy(asc(trajectories.rolloutId))
      .all()
      .map((r) => r.id);
  expect(ids()).toEqual(["e0-r9", "e1-r2", "e1-r3", "s0-r0", "s1-r0"]);
  expect(second.db.select().from(turns).where(eq(turns.rolloutId, "e1-r4")).all()).toEqual([]);
  expect(second.db.select().from(turns).where(eq(turns.rolloutId, "e0-r9")).all()).toHaveLength(2);
  const log = second.db.select().from(logs).all().at(-1)!.message;
  expect(log).toContain(
    "the eval after step 1 was cut short: dropped 2 of its rollouts, kept 2, it runs again",
  );
  const recorded = second.recorded.get("e1-r2")!;
  expect(recorded).toMatchObject({
    step: 1,
    groupId: "eval:1:v0",
    exampleId: "v0",
    initialMessages: initial,
  });
  expect(recorded.stopReason).toBeUndefined();
  expect(recorded.turns.map((t) => t.completionText)).toEqual(inFlight.map((t) => t.completionText));
  expect(second.recorded.get("e1-r3")?.stopReason).toBe("max_turns");

  // the eval runs again: eval:end is written at once (no flush by the test) and its resume points go with it
  expect(second.db.select().from(turnResume).all().length).toBeGreaterThan(0);
  evalEnd(second, 1, ["e1-r2", "e1-r3", "e1-r0", "e1-r1"]);
  const all = second.db.select().from(evaluations).where(eq(evaluations.task, "all")).all();
  expect(all.map((r) => [r.step, r.policy])).toEqual([
    [0, "v1"],
    [1, "v2"],
  ]);
  expect(
    second.db
      .select()
      .from(metrics)
      .where(eq(metrics.source, "eval"))
      .all()
      .filter((m) => m.step === 1)
      .map((m) => m.name)
      .sort(),
  ).toEqual(["eval/reward/mean", "eval/rollouts", "eval/t/reward/mean"]);
  expect(second.db.select().from(turnResume).all()).toEqual([]);
  expect(second.evalRecorded(1)).toBe(true);
  second.close();

  // a later resume at the same step finds that eval ended: nothing of it is dropped
  const third = new RunRecorder(openStore(file), options, {
    name: "r",
    runDir: dir,
    resume: { startStep: 2, rollouts: true },
  });
  expect(third.continued?.cutShortEval).toBeUndefined();
  expect(third.continued?.droppedTrajectories).toBe(0);
  third.close();
});
