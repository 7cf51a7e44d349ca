import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { EventBus, type Message, type Turn } from "@air/core";
import { makeTrajectory, makeTurn } from "@air/core/testing";
import { openStore, type StoreDb } from "./open.ts";
import { readTrajectory } from "./read.ts";
import { RunRecorder } from "./recorder.ts";

let db: StoreDb;
let recorder: RunRecorder;
let bus: EventBus;

/** Counts, through temp triggers on the recorder's own connection, how the turn rows are written. */
function countWrites() {
  const c = db.$client;
  c.exec("CREATE TEMP TABLE writes (kind TEXT)");
  c.exec(
    "CREATE TEMP TRIGGER turn_insert AFTER INSERT ON main.turns BEGIN INSERT INTO writes VALUES ('insert'); END",
  );
  c.exec(`CREATE TEMP TRIGGER turn_rewrite AFTER UPDATE OF prompt_messages_json, completion, observation
    ON main.turns BEGIN INSERT INTO writes VALUES ('rewrite'); END`);
  c.exec(
    "CREATE TEMP TRIGGER turn_update AFTER UPDATE ON main.turns BEGIN INSERT INTO writes VALUES ('update'); END",
  );
  return () => {
    const rows = c.query("SELECT kind, count(*) AS n FROM writes GROUP BY kind").all() as Array<{
      kind: string;
      n: number;
    }>;
    return Object.fromEntries(rows.map((r) => [r.kind, r.n]));
  };
}

function turns(n: number): Turn[] {
  return Array.from({ length: n }, (_, index) =>
    makeTurn({
      index,
      promptMessages: [{ role: "user", content: `prompt ${index}` }],
      completionText: `reply ${index}`,
      observation: `observation ${index}`,
    }),
  );
}

async function rollout(id: string, list: Turn[], emitTurns: boolean) {
  const base = { rolloutId: id, exampleId: "e", task: "t", groupId: "0:e", step: 0, policyVersion: 0 };
  await bus.emit("rollout:start", { ...base, attempt: 0 });
  if (emitTurns) for (const turn of list) await bus.emit("turn:end", { rolloutId: id, step: 0, turn });
  recorder.writer.flush();
  // As core does: rewards (and the auto-submit's scores) land on the same turn objects before rollout:end.
  list.forEach((turn, i) => {
    turn.reward = i / 10;
    turn.rewardBreakdown = { delta: i / 10 };
  });
  const last = list.at(-1);
  if (last) Object.assign(last, { scores: { acc: 0.9 }, stepKind: "auto_submit", info: { finish: true } });
  await bus.emit("rollout:end", { trajectory: makeTrajectory({ id, turns: list, reward: 1 }) });
  recorder.writer.flush();
}

beforeEach(() => {
  db = openStore(":memory:");
  recorder = new RunRecorder(db, { flushRows: 1000, flushMs: 60_000 });
  bus = new EventBus();
  bus.onAll(recorder.hooks, "sqlite");
});
afterEach(() => recorder.close());

describe("each turn is written once", () => {
  test("insert at turn:end, then only the outcome columns at rollout:end", async () => {
    const writes = countWrites();
    const list = turns(3);
    const base = { rolloutId: "a", exampleId: "e", task: "t", groupId: "0:e", step: 0, policyVersion: 0 };
    await bus.emit("rollout:start", { ...base, attempt: 0 });
    for (const turn of list) await bus.emit("turn:end", { rolloutId: "a", step: 0, turn });
    recorder.writer.flush();
    const running = readTrajectory(db, recorder.runId, "a")!;
    expect(running.turns.map((t) => [t.completion, t.reward])).toEqual([
      ["reply 0", null],
      ["reply 1", null],
      ["reply 2", null],
    ]);
    list.forEach((turn, i) => {
      turn.reward = i / 10;
      turn.rewardBreakdown = { delta: i / 10 };
    });
    Object.assign(list[2]!, { scores: { acc: 0.9 }, stepKind: "auto_submit", info: { finish: true } });
    await bus.emit("rollout:end", { trajectory: makeTrajectory({ id: "a", turns: list, reward: 1 }) });
    recorder.writer.flush();
    expect(writes()).toEqual({ insert: 3, update: 3 });
    const done = readTrajectory(db, recorder.runId, "a")!;
    expect(done.turns.map((t) => [t.idx, t.reward, t.rewardBreakdown?.delta, t.observation])).toEqual([
      [0, 0, 0, "observation 0"],
      [1, 0.1, 0.1, "observation 1"],
      [2, 0.2, 0.2, "observation 2"],
    ]);
    expect(done.turns[2]).toMatchObject({
      scores: { acc: 0.9 },
      stepKind: "auto_submit",
      infoJson: '{"finish":true}',
    });
    expect(done.trajectory).toMatchObject({ status: "done", turnCount: 3, reward: 1 });
  });

  test("a turn whose turn:end was not seen is written whole at rollout:end", async () => {
    const writes = countWrites();
    await rollout("b", turns(2), false);
    expect(writes()).toEqual({ insert: 2 });
    const t = readTrajectory(db, recorder.runId, "b")!;
    expect(t.turns.map((x) => [x.completion, x.reward, x.prompt[0]?.content])).toEqual([
      ["reply 0", 0, "prompt 0"],
      ["reply 1", 0.1, "prompt 1"],
    ]);
  });

  test("a retried rollout keeps only the last attempt's turns", async () => {
    const base = { rolloutId: "c", exampleId: "e", task: "t", groupId: "0:e", step: 0, policyVersion: 0 };
    await bus.emit("rollout:start", { ...base, attempt: 0 });
    for (const turn of turns(3)) await bus.emit("turn:end", { rolloutId: "c", step: 0, turn });
    await bus.emit("rollout:start", { ...base, attempt: 1 });
    const retry = turns(2);
    for (const turn of retry) await bus.emit("turn:end", { rolloutId: "c", step: 0, turn });
    await bus.emit("rollout:end", { trajectory: makeTrajectory({ id: "c", turns: retry }) });
    recorder.writer.flush();
    const t = readTrajectory(db, recorder.runId, "c")!;
    expect(t.turns).toHaveLength(2);
    expect(t.trajectory).toMatchObject({ attempt: 1, turnCount: 2 });
  });
});

describe("a 30-turn trajectory with a growing prompt", () => {
  test("each row holds only its turn's new text, and the trajectory reads back whole", async () => {
    const initial = [
      { role: "system" as const, content: "sys" },
      { role: "user" as const, content: "task ".repeat(100) },
    ];
    const conversation: Message[] = [...initial];
    const list: Turn[] = [];
    for (let index = 0; index < 30; index++) {
      const turn = makeTurn({
        index,
        promptMessages: [...conversation],
        completionText: `reply ${index} `.repeat(20),
        observation: `observation ${index} `.repeat(40),
      });
      list.push(turn);
      conversation.push(
        { role: "assistant", content: turn.completionText },
        { role: "user", content: turn.observation },
      );
    }
    await rollout("long", list, true);
    const rows = db.$client
      .query(
        "SELECT idx, prompt_messages_json AS p, prompt_from_previous AS f, completion, observation FROM turns ORDER BY idx",
      )
      .all() as Array<{ idx: number; p: string; f: number; completion: string; observation: string }>;
    expect(rows).toHaveLength(30);
    expect(JSON.parse(rows[0]?.p ?? "")).toEqual(initial);
    for (const [k, row] of rows.entries()) {
      expect(row.completion).toBe(list[k]?.completionText ?? "");
      expect(row.observation).toBe(list[k]?.observation ?? "");
      // Turn k's prompt adds turn k-1's reply and observation: stored as a flag, not a second copy.
      if (k > 0) expect([row.p, row.f]).toEqual(["[]", 1]);
    }
    const storedText = rows.reduce((a, r) => a + r.p.length + r.completion.length + r.observation.length, 0);
    const promptText = list.reduce(
      (a, t) => a + t.promptMessages.reduce((b, m) => b + m.content.length, 0),
      0,
    );
    expect(storedText).toBeLessThan(promptText / 10);
    const back = readTrajectory(db, recorder.runId, "long")!;
    expect(back.turns.map((t) => t.prompt)).toEqual(list.map((t) => t.promptMessages));
    expect(back.trajectory).toMatchObject({ turnCount: 30 });
  });
});
