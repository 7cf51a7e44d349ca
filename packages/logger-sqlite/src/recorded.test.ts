import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Message, type ResumePoint, SCHEMA_VERSION, type Turn } from "@air/core";
import { makeTrajectory, makeTurn } from "@air/core/testing";
import { openStore } from "./open.ts";
import { RunRecorder } from "./recorder.ts";
import { turnResume } from "./schema.ts";

const dir = mkdtempSync(join(tmpdir(), "air-recorded-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const initial: Message[] = [
  { role: "system", content: "sys" },
  { role: "user", content: "task" },
];

/** Turn `i` of a rollout whose prompts extend the previous turn's ids (and turn 2's do not: a re-rendered history). */
function turnAt(i: number, previous: Turn | undefined): Turn {
  const history = previous
    ? [
        ...previous.promptMessages,
        { role: "assistant" as const, content: previous.completionText },
        { role: "user" as const, content: previous.observation },
      ]
    : initial;
  const base = previous && i !== 2 ? [...previous.promptTokenIds, ...previous.completionTokenIds] : [];
  return makeTurn({
    index: i,
    promptMessages: history,
    completionText: `reply ${i}`,
    observation: `obs ${i}`,
    promptTokenIds: Int32Array.from([...base, 1000 + i, -7, 2 ** 31 - 1]),
    completionTokenIds: Int32Array.from([i, i + 1, 65_000]),
    completionLogprobs: Float32Array.from([-0.125 * i, i === 1 ? 0 : -3.5, -1e-7]),
    // llama.cpp gave turn 1's middle token no logprob: masked, kept out of the loss after the resume too
    ...(i === 1 && { completionMask: [1, 0, 1] }),
    policyVersion: i < 2 ? 3 : 4,
    action: { text: `reply ${i}`, command: `cmd ${i}` },
    scores: i === 1 ? { r2: 0.5 } : undefined,
  });
}

/** kill -9 of `first` (no rollout:end, no run:end), then `rl --resume` at step 3 with durable rollouts. */
function killAndResume(first: RunRecorder, file: string, runDir: string): RunRecorder {
  first.writer.flush();
  first.db.$client.close();
  const resume = { startStep: 3, rollouts: true };
  return new RunRecorder(openStore(file), { flushRows: 1, flushMs: 5 }, { name: "r", runDir, resume });
}

test("a killed run's in-flight rollout comes back with every turn as recorded: prompts, token ids, logprobs, versions, point", () => {
  const file = join(dir, "air.db");
  const first = new RunRecorder(openStore(file), { flushRows: 1, flushMs: 5 }, { name: "r", runDir: dir });
  const start = { exampleId: "ex", task: "t", groupId: "3:ex", step: 3, policyVersion: 3, attempt: 0 };
  first.hooks["rollout:start"]({ rolloutId: "s3-r0", ...start });
  first.hooks["rollout:start"]({ rolloutId: "s3-r1", ...start });
  const turns: Turn[] = [];
  for (let i = 0; i < 4; i++) {
    const turn = turnAt(i, turns.at(-1));
    turns.push(turn);
    const point: ResumePoint = { state: { turn: i, snapshot: { id: `s3-r0-t${i}` } }, done: false };
    if (i === 0) point.initialMessages = initial;
    first.hooks["turn:end"]({ rolloutId: "s3-r0", step: 3, turn, point });
  }
  // recorded without points (resume_rollouts off): not kept, starts over
  first.hooks["turn:end"]({ rolloutId: "s3-r1", step: 3, turn: turnAt(0, undefined) });
  // two that ended before the kill (their step untrained): one by itself, one aborted (that one goes on)
  for (const [id, stopReason] of [
    ["s3-r2", "max_turns"],
    ["s3-r3", "aborted"],
  ] as const) {
    first.hooks["rollout:start"]({ rolloutId: id, ...start });
    const turn = turnAt(0, undefined);
    first.hooks["turn:end"]({
      rolloutId: id,
      step: 3,
      turn,
      point: { state: {}, done: false, initialMessages: initial },
    });
    first.hooks["rollout:end"]({
      trajectory: makeTrajectory({ id, step: 3, groupId: "3:ex", stopReason, turns: [turn] }),
    });
  }
  const second = killAndResume(first, file, dir);
  expect(second.continued?.kept).toEqual(["s3-r0", "s3-r2", "s3-r3"]);
  expect(second.recorded.get("s3-r2")?.stopReason).toBe("max_turns");
  expect(second.recorded.get("s3-r3")?.stopReason).toBeUndefined();
  const recorded = second.recorded.get("s3-r0");
  expect(recorded?.stopReason).toBeUndefined();
  expect(recorded).toMatchObject({ rolloutId: "s3-r0", step: 3, groupId: "3:ex", exampleId: "ex" });
  expect(recorded!.initialMessages).toEqual(initial);
  expect(recorded!.point).toEqual({ state: { turn: 3, snapshot: { id: "s3-r0-t3" } }, done: false });
  expect(recorded!.turns).toHaveLength(4);
  for (const [i, turn] of recorded!.turns.entries()) {
    const want = turns[i]!;
    expect(Array.from(turn.promptTokenIds)).toEqual(Array.from(want.promptTokenIds));
    expect(Array.from(turn.completionTokenIds)).toEqual(Array.from(want.completionTokenIds));
    expect(Array.from(turn.completionLogprobs)).toEqual(Array.from(want.completionLogprobs));
    expect(turn.completionMask).toEqual(want.completionMask);
    expect(turn.promptMessages).toEqual(want.promptMessages);
    expect(turn).toMatchObject({
      index: i,
      completionText: want.completionText,
      observation: want.observation,
      policyVersion: want.policyVersion,
      action: { text: want.completionText, command: `cmd ${i}` },
    });
  }
  expect(recorded!.turns[1]!.scores).toEqual({ r2: 0.5 });
  expect(recorded!.turns[1]!.completionMask).toEqual([1, 0, 1]);
  expect("completionMask" in recorded!.turns[0]!).toBe(false);
  // turn 1 stored only its own 3 prompt ids after the 6 it shares with turn 0; turn 2 (no shared prefix) all
  const bases = second.db.select({ base: turnResume.promptIdsBase }).from(turnResume).all();
  expect(bases.map((b) => b.base)).toEqual([0, 6, 0, 6, 0, 0]);

  // the loop takes each kept rollout up again before the step ends (unstarted ones go at step:end)
  for (const [id, at] of [
    ["s3-r0", 4],
    ["s3-r2", 1],
    ["s3-r3", 1],
  ] as const)
    second.hooks["rollout:start"]({ rolloutId: id, ...start, resumedAt: at });
  // its step ends: kept (a kill while it trains resumes at step 3 again); its weights arrive: gone
  second.hooks["step:end"]({
    step: 3,
    trajectories: [makeTrajectory({ id: "s3-r0", step: 3, turns: recorded!.turns })],
    batch: { schemaVersion: SCHEMA_VERSION, step: 3, samples: [], metrics: {} },
    metrics: {},
    warnings: [],
  });
  second.writer.flush();
  expect(second.db.select().from(turnResume).all()).toHaveLength(6);
  second.hooks["weights:updated"]({ weights: { version: 3 }, metrics: {} });
  second.writer.flush();
  expect(second.db.select().from(turnResume).all()).toHaveLength(6);
  second.hooks["weights:updated"]({ weights: { version: 4 }, metrics: {} });
  second.writer.flush();
  expect(second.db.select().from(turnResume).all()).toEqual([]);
  second.close();
});

test("a turn's resume point is on disk one tick after turn:end, not flush_ms later (the env prunes the snapshot before it)", async () => {
  const file = join(dir, "soon.db");
  const recorder = new RunRecorder(
    openStore(file),
    { flushRows: 1000, flushMs: 60_000 },
    { name: "r", runDir: dir },
  );
  const start = { exampleId: "ex", task: "t", groupId: "0:ex", step: 0, policyVersion: 0, attempt: 0 };
  recorder.hooks["rollout:start"]({ rolloutId: "s0-r0", ...start });
  const point: ResumePoint = {
    state: { snapshot: { id: "s0-r0-t0" } },
    done: false,
    initialMessages: initial,
  };
  recorder.hooks["turn:end"]({ rolloutId: "s0-r0", step: 0, turn: turnAt(0, undefined), point });
  await new Promise((resolve) => setImmediate(resolve));
  // what a second process (`rl --resume` after a kill -9) reads
  const other = openStore(file);
  try {
    expect(other.select().from(turnResume).all()).toHaveLength(1);
  } finally {
    other.$client.close();
    recorder.db.$client.close();
  }
});

test("a tree node comes back with its parent link (stored from its rollout:start) and a branched node as branched", () => {
  const file = join(dir, "tree.db");
  const runDir = join(dir, "tree");
  const first = new RunRecorder(openStore(file), { flushRows: 1, flushMs: 5 }, { name: "r", runDir });
  const start = { exampleId: "ex", task: "t", groupId: "3:ex", step: 3, policyVersion: 3, attempt: 0 };
  const point = (i: number): ResumePoint => ({
    state: { turn: i },
    done: false,
    ...(i === 0 ? { initialMessages: initial } : {}),
  });
  first.hooks["rollout:start"]({ rolloutId: "s3-r0", ...start });
  const root = turnAt(0, undefined);
  first.hooks["turn:end"]({ rolloutId: "s3-r0", step: 3, turn: root, point: point(0) });
  const parent = { trajectoryId: "s3-r0", turnIndex: 1 };
  first.hooks["rollout:start"]({ rolloutId: "s3-r1", ...start, parent });
  first.hooks["turn:end"]({
    rolloutId: "s3-r1",
    step: 3,
    turn: { ...turnAt(1, root), index: 1 },
    point: point(0),
  });
  // the root's rollout:end (branched) reached the store, its child's did not
  first.hooks["rollout:end"]({
    trajectory: makeTrajectory({
      id: "s3-r0",
      step: 3,
      groupId: "3:ex",
      stopReason: "branched",
      turns: [root],
    }),
  });
  const second = killAndResume(first, file, runDir);
  expect(second.continued?.kept).toEqual(["s3-r0", "s3-r1"]);
  expect(second.recorded.get("s3-r0")?.stopReason).toBe("branched");
  expect(second.recorded.get("s3-r0")?.parent).toBeUndefined();
  expect(second.recorded.get("s3-r1")?.stopReason).toBeUndefined();
  expect(second.recorded.get("s3-r1")?.parent).toEqual(parent);
  second.close();
});

test("a kept rollout that no rollout:start took up by its step's end (a tree grown again, smaller) goes, with a warning; none stays running", () => {
  const file = join(dir, "unresumed.db");
  const runDir = join(dir, "unresumed");
  const first = new RunRecorder(openStore(file), { flushRows: 1, flushMs: 5 }, { name: "r", runDir });
  const start = { exampleId: "ex", task: "t", groupId: "3:ex", step: 3, policyVersion: 3, attempt: 0 };
  const point: ResumePoint = { state: { turn: 0 }, done: false, initialMessages: initial };
  for (const id of ["s3-r0", "s3-r1", "s3-r2"]) {
    first.hooks["rollout:start"]({ rolloutId: id, ...start });
    first.hooks["turn:end"]({ rolloutId: id, step: 3, turn: turnAt(0, undefined), point });
  }
  const second = killAndResume(first, file, runDir);
  expect(second.continued?.kept).toEqual(["s3-r0", "s3-r1", "s3-r2"]);
  second.hooks["step:start"]({ step: 3, policyVersion: 3 });
  // s3-r0 continues, s3-r1 starts over under its id; s3-r2 is never started again
  second.hooks["rollout:start"]({ rolloutId: "s3-r0", ...start, resumedAt: 1 });
  second.hooks["rollout:start"]({ rolloutId: "s3-r1", ...start });
  for (const id of ["s3-r0", "s3-r1"])
    second.hooks["rollout:end"]({
      trajectory: makeTrajectory({ id, step: 3, groupId: "3:ex", turns: [turnAt(0, undefined)] }),
    });
  const rows = () =>
    second.db.$client
      .query<{ id: string; status: string }, []>(
        "SELECT rollout_id AS id, status FROM trajectories ORDER BY 1",
      )
      .all();
  second.writer.flush();
  expect(rows().map((r) => r.id)).toEqual(["s3-r0", "s3-r1", "s3-r2"]);
  second.hooks["step:end"]({
    step: 3,
    trajectories: [],
    batch: { schemaVersion: SCHEMA_VERSION, step: 3, samples: [], metrics: {} },
    metrics: {},
    warnings: [],
  });
  second.writer.flush();
  expect(rows()).toEqual([
    { id: "s3-r0", status: "done" },
    { id: "s3-r1", status: "done" },
  ]);
  const count = (table: string) =>
    second.db.$client
      .query<{ n: number }, [string]>(`SELECT count(*) AS n FROM ${table} WHERE rollout_id = ?1`)
      .get("s3-r2")?.n;
  expect([count("turns"), count("turn_resume")]).toEqual([0, 0]);
  const warning = second.db.$client
    .query<{ message: string }, []>("SELECT message FROM logs WHERE level = 'warn' AND source = 'sqlite'")
    .all();
  expect(warning.map((w) => w.message)).toEqual([
    "dropped 1 recorded rollout(s) the resume did not continue: s3-r2",
  ]);
  second.close();
});
