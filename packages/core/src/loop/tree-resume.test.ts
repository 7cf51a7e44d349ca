import { expect, test } from "bun:test";
import { EventBus, type EventHandlers } from "../events.ts";
import { createLogger } from "../log.ts";
import { PendingWork, Semaphore } from "../pending.ts";
import type { Environment, EnvSession, Policy } from "../plugin.ts";
import { makeContext, notebookEnv, renderPrompt } from "../testing/index.ts";
import type { Trajectory, Turn } from "../types.ts";
import type { RecordedRollout, ResumePoint } from "./resume.ts";
import { growTree } from "./tree.ts";
import type { TreeDeps } from "./tree-grow.ts";
import { treeMetrics } from "./tree-score.ts";

const TREE = {
  roots: 2,
  branching_factor: 2,
  branch_turns: [1, 2],
  branch_every: 0,
  branch_on_validate: false,
  global_weight: 0,
  sqrt_leaves: false,
};
const EXAMPLE = { id: "nb0", task: "notebook" };

/** Per node and turn `write <node>t<turn>`, `ls` or `validate` (a hash); token ids: the rendered conversation. */
function scribe(version: { v: number }): Policy {
  return {
    get version() {
      return version.v;
    },
    async generate(request) {
      let h = 7;
      for (const c of `${request.rolloutId}/${request.turnIndex}`)
        h = (h * 31 + (c.codePointAt(0) ?? 0)) >>> 0;
      const text = [`write ${request.rolloutId}t${request.turnIndex}`, "ls", "validate"][h % 3] as string;
      const completionTokenIds = [...Array.from(text, (c) => 10 + (c.codePointAt(0) ?? 0)), 5];
      return {
        action: { text, command: text },
        promptTokenIds: renderPrompt(request.messages, false),
        completionTokenIds,
        completionLogprobs: completionTokenIds.map((_, i) => -0.125 * (i + request.turnIndex)),
        finishReason: "stop",
        policyVersion: version.v,
        temperature: 1,
      };
    },
  };
}

/** One run of one example's trees; counts env steps, restores and opens; records events in order. */
async function setup(policyVersion = 0, tree = TREE, maxLeaves = 8) {
  const env = (await notebookEnv.create({ examples: 1, can_fork: true }, makeContext())) as Environment;
  const counts = { steps: 0, restores: 0, opens: 0 };
  const counted = (session: EnvSession): EnvSession => ({
    ...session,
    step: (action) => {
      counts.steps++;
      return session.step(action);
    },
    fork: async (info) => counted(await session.fork!(info)),
    saveState: session.saveState?.bind(session),
  });
  const restore = env.restore!.bind(env);
  const open = env.open.bind(env);
  env.open = async (example, info) => {
    counts.opens++;
    return counted(await open(example, info));
  };
  env.restore = async (example, info) => {
    counts.restores++;
    return counted(await restore(example, info));
  };
  // nodes taken as recorded open no session: their states go through the env (no keepState here: at once)
  const dropped: string[] = [];
  env.dropStates = async (ids) => {
    dropped.push(...ids);
  };
  const events: Array<{ name: string; e: unknown }> = [];
  const bus = new EventBus();
  const keep =
    <K extends "rollout:start" | "turn:end" | "rollout:end">(name: K) =>
    (e: Parameters<EventHandlers[K]>[0]) => {
      events.push({ name, e });
    };
  bus.onAll(
    {
      "rollout:start": keep("rollout:start"),
      "turn:end": keep("turn:end"),
      "rollout:end": keep("rollout:end"),
    },
    "test",
  );
  const warnings: string[] = [];
  const semaphore = new Semaphore(3);
  let n = 0;
  const deps: TreeDeps = {
    env,
    policy: scribe({ v: policyVersion }),
    bus,
    pending: new PendingWork(),
    names: { env: "notebook", policy: "scribe" },
    maxTurns: 4,
    timeouts: { env_open_ms: 5000, env_step_ms: 5000, generate_ms: 5000, reward_ms: 5000 },
    signal: new AbortController().signal,
    rewards: [],
    retries: 0,
    log: createLogger("test", (level, _source, message) => {
      if (level === "warn") warnings.push(message);
    }),
    policyVersion: () => policyVersion,
    resumeRollouts: true,
    tree,
    maxLeaves,
    slot: () => semaphore.acquire(),
  };
  const grow = (recorded?: RecordedRollout[]) =>
    growTree(deps, { example: EXAMPLE, groupId: "0:nb0", step: 0, nextId: () => `s0-r${n++}`, recorded });
  return { deps, grow, counts, events, warnings, dropped };
}

type Events = Awaited<ReturnType<typeof setup>>["events"];

/**
 * What the store holds after a kill once `turns` turns were recorded (logger-sqlite's `recordedRollouts`): every
 * started node with at least one turn, each turn's point, the parent link from rollout:start; stopReasons of the
 * nodes whose rollout:end was recorded.
 */
function storeAfter(events: Events, turns: number): RecordedRollout[] {
  const cut = events.findIndex(
    (_, i) => events.slice(0, i + 1).filter((x) => x.name === "turn:end").length === turns,
  );
  const seen = events.slice(0, cut + 1);
  const nodes = new Map<string, RecordedRollout>();
  for (const { name, e } of seen) {
    if (name === "rollout:start") {
      const s = e as Parameters<EventHandlers["rollout:start"]>[0];
      nodes.set(s.rolloutId, {
        rolloutId: s.rolloutId,
        step: s.step,
        groupId: s.groupId,
        exampleId: s.exampleId,
        initialMessages: [],
        turns: [],
        point: { state: {}, done: false },
        startMs: 1,
        ...(s.parent ? { parent: s.parent } : {}),
      });
    } else if (name === "turn:end") {
      const t = e as { rolloutId: string; turn: Turn; point?: ResumePoint };
      const r = nodes.get(t.rolloutId)!;
      r.turns.push(t.turn);
      r.point = t.point!;
      if (t.point?.initialMessages) r.initialMessages = t.point.initialMessages;
    } else {
      const t = (e as { trajectory: Trajectory }).trajectory;
      const r = nodes.get(t.id);
      if (r) r.stopReason = t.stopReason;
    }
  }
  return [...nodes.values()].filter((r) => r.turns.length > 0);
}

const leafPaths = (nodes: Trajectory[]) => {
  const byId = new Map(nodes.map((t) => [t.id, t]));
  const path = (t: Trajectory): Trajectory[] =>
    t.parent ? [...path(byId.get(t.parent.trajectoryId)!), t] : [t];
  return nodes
    .filter((t) => t.stopReason !== "branched")
    .map((t) => path(t).flatMap((x) => x.turns.map((u) => u.index)));
};

/** The tree's shape as an uninterrupted run makes it: 2 roots, 4 children, 8 leaves, every path turns 0..3. */
function expectShape(nodes: Trajectory[]) {
  expect(nodes).toHaveLength(14);
  expect(nodes.filter((t) => t.stopReason === "branched")).toHaveLength(6);
  expect(leafPaths(nodes)).toEqual(Array.from({ length: 8 }, () => [0, 1, 2, 3]));
  expect(treeMetrics(nodes)["tree/env_steps"]).toBe(22);
  expect(new Set(nodes.map((t) => t.id)).size).toBe(14);
}

test.each([9, 13, 17])(
  "kill mid-tree after %i turns, resume: recorded nodes kept as they were, in-flight nodes continue from their last turn, missing children fork again; shape and env steps as uninterrupted",
  async (cut) => {
    const whole = await setup();
    const uninterrupted = await whole.grow();
    expectShape(uninterrupted);
    const byId = new Map(uninterrupted.map((t) => [t.id, t]));

    const recorded = storeAfter(whole.events, cut);
    const inFlight = recorded.filter(
      (r) => !uninterrupted.some((t) => t.parent?.trajectoryId === r.rolloutId),
    );
    const has = (id: string) => recorded.some((r) => r.rolloutId === id);
    const kids = (id: string) => uninterrupted.filter((t) => t.parent?.trajectoryId === id).map((t) => t.id);
    // each cut has a node in flight with turns to play and a branch point whose children (some or all) never played
    expect(inFlight.some((r) => r.turns.at(-1)!.index < 3)).toBe(true);
    expect(recorded.some((r) => kids(r.rolloutId).length > 0 && !kids(r.rolloutId).every(has))).toBe(true);

    const resumed = await setup(1);
    const nodes = await resumed.grow(recorded);
    expect(resumed.warnings).toEqual([]);
    expectShape(nodes);
    const played = resumed.events
      .filter((x) => x.name === "turn:end")
      .map((x) => x.e as { rolloutId: string; turn: Turn });
    // env steps not redone: the resumed run played exactly the turns the store did not have
    const recordedTurns = recorded.reduce((a, r) => a + r.turns.length, 0);
    expect(resumed.counts.steps).toBe(22 - recordedTurns);
    expect(played).toHaveLength(22 - recordedTurns);
    for (const r of recorded) {
      const t = nodes.find((x) => x.id === r.rolloutId)!;
      // byte-identical: the very turns the store gave back (token ids, logprobs, versions), then continued
      expect(t.turns.slice(0, r.turns.length)).toEqual(r.turns);
      for (const [i, turn] of r.turns.entries()) expect(t.turns[i]).toBe(turn);
      expect(t.parent).toEqual(r.parent);
      expect(
        played.some(
          (p) => p.rolloutId === r.rolloutId && p.turn.index < t.turns[r.turns.length - 1]!.index + 1,
        ),
      ).toBe(false);
      expect(t.metrics["resume/turn"]).toBe(r.turns.length);
      // a node that continued went on exactly as it would have without the kill (same ids, same conversation)
      const want = byId.get(r.rolloutId)!;
      expect(
        t.turns.map((u) => [
          Array.from(u.promptTokenIds),
          Array.from(u.completionTokenIds),
          Array.from(u.completionLogprobs),
        ]),
      ).toEqual(
        want.turns.map((u) => [
          Array.from(u.promptTokenIds),
          Array.from(u.completionTokenIds),
          Array.from(u.completionLogprobs),
        ]),
      );
      expect(t.turns.slice(r.turns.length).every((u) => u.policyVersion === 1)).toBe(true);
      expect(t.turns.slice(0, r.turns.length).every((u) => u.policyVersion === 0)).toBe(true);
    }
    // in-flight nodes were restored, one session each; no root opened afresh (both were recorded)
    expect(resumed.counts.opens).toBe(0);
    expect(resumed.counts.restores).toBeGreaterThanOrEqual(inFlight.length);
    // rollout:end once per node
    const ends = resumed.events
      .filter((x) => x.name === "rollout:end")
      .map((x) => (x.e as { trajectory: Trajectory }).trajectory.id);
    expect(ends.sort()).toEqual(nodes.map((t) => t.id).sort());
    const starts = resumed.events
      .filter((x) => x.name === "rollout:start")
      .map((x) => x.e as { rolloutId: string; resumedAt?: number });
    expect(starts.map((s) => s.rolloutId).sort()).toEqual(nodes.map((t) => t.id).sort());
    for (const r of recorded)
      expect(starts.find((s) => s.rolloutId === r.rolloutId)?.resumedAt).toBe(r.turns.length);
    const taken = recorded.filter((r) => kids(r.rolloutId).some(has));
    expect(resumed.dropped.sort()).toEqual(taken.map((r) => r.rolloutId).sort());
  },
);

test("a node whose state is lost starts over from its parent's branch point, with a warning; a lost root's tree starts over", async () => {
  const whole = await setup();
  const uninterrupted = await whole.grow();
  const recorded = storeAfter(whole.events, 9);
  const child = recorded.find(
    (r) => r.parent && !uninterrupted.some((t) => t.parent?.trajectoryId === r.rolloutId),
  )!;
  child.point = { ...child.point, state: { lost: true } };

  const resumed = await setup(1);
  const nodes = await resumed.grow(recorded);
  expectShape(nodes);
  expect(resumed.warnings).toHaveLength(1);
  expect(resumed.warnings[0]).toContain(
    `tree rollout ${child.rolloutId} (nb0) starts over from its parent ${child.parent!.trajectoryId}'s branch point (turn ${child.parent!.turnIndex})`,
  );
  const again = nodes.find((t) => t.id === child.rolloutId)!;
  expect(again.turns[0]!.index).toBe(child.parent!.turnIndex);
  expect(again.metrics["resume/turn"]).toBeUndefined();
  expect(again.turns.every((u) => u.policyVersion === 1)).toBe(true);
  const recordedTurns = recorded.reduce((a, r) => a + r.turns.length, 0);
  expect(resumed.counts.steps).toBe(22 - recordedTurns + child.turns.length);

  // its parent's state lost too: the whole tree starts over under its root's id
  const parent = recorded.find((r) => r.rolloutId === child.parent!.trajectoryId)!;
  parent.point = { ...parent.point, state: { lost: true } };
  let root = parent;
  while (root.parent) root = recorded.find((r) => r.rolloutId === root.parent!.trajectoryId)!;
  const third = await setup(1);
  const regrown = await third.grow(recorded);
  expectShape(regrown);
  expect(third.warnings).toHaveLength(1);
  expect(third.warnings[0]).toStartWith(`tree ${root.rolloutId} (nb0) starts over: `);
  expect(third.counts.opens).toBe(1);
  const fresh = regrown.find((t) => t.id === root.rolloutId)!;
  expect(fresh.metrics["resume/turn"]).toBeUndefined();
  expect(fresh.turns[0]!.policyVersion).toBe(1);
});

test("a tree that had ended before the kill is taken as recorded: no env opened or restored, no step, rescored", async () => {
  const whole = await setup();
  const uninterrupted = await whole.grow();
  const recorded = storeAfter(whole.events, 22);
  for (const r of recorded) r.stopReason = uninterrupted.find((t) => t.id === r.rolloutId)!.stopReason;
  const resumed = await setup(1);
  const nodes = await resumed.grow(recorded);
  expectShape(nodes);
  expect(resumed.counts).toEqual({ steps: 0, restores: 0, opens: 0 });
  expect(resumed.warnings).toEqual([]);
  for (const t of nodes) expect(t.turns).toEqual(uninterrupted.find((u) => u.id === t.id)!.turns);
  expect(resumed.dropped.sort()).toEqual(nodes.map((t) => t.id).sort());
  // a recorded node that cannot be placed (its parent unknown) and is not needed again: its states go too
  const ghost = { ...recorded[1]!, rolloutId: "s0-r99", parent: { trajectoryId: "s0-gone", turnIndex: 2 } };
  const third = await setup(1);
  await third.grow([...recorded, ghost]);
  expect(third.warnings).toEqual([
    "tree rollouts s0-r99 (nb0) start over: their parent node was not recorded",
  ]);
  expect(third.dropped.sort()).toEqual([...nodes.map((t) => t.id), "s0-r99"].sort());
});

test("a root that branched before its first turn (branch_turns = [0]) is rebuilt from its children; a missing child starts from a fresh session", async () => {
  const tree = { ...TREE, roots: 1, branch_turns: [0, 2] };
  const whole = await setup(0, tree, 4);
  const uninterrupted = await whole.grow();
  // the root has no turns (the store keeps no row of it), 2 children play turns 0-1, 4 leaves turns 2-3
  expect(uninterrupted.map((t) => t.turns.length).sort()).toEqual([0, 2, 2, 2, 2, 2, 2]);
  const recorded = storeAfter(whole.events, 1);
  expect(recorded.map((r) => r.parent)).toEqual([{ trajectoryId: "s0-r0", turnIndex: 0 }]);

  const resumed = await setup(1, tree, 4);
  const nodes = await resumed.grow(recorded);
  expect(resumed.warnings).toEqual([]);
  expect(nodes).toHaveLength(7);
  expect(leafPaths(nodes)).toEqual(Array.from({ length: 4 }, () => [0, 1, 2, 3]));
  expect(nodes.find((t) => t.id === "s0-r0")).toMatchObject({ stopReason: "branched", turns: [] });
  // the missing sibling's state at the root's branch point is a fresh session: one open, no restore of the root
  expect(resumed.counts.opens).toBe(1);
  expect(resumed.counts.steps).toBe(12 - 1);
  const child = nodes.find((t) => t.id === recorded[0]!.rolloutId)!;
  expect(child.turns[0]).toBe(recorded[0]!.turns[0]!);
});
