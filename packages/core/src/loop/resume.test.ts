import { expect, test } from "bun:test";
import { EventBus, type EventHandlers } from "../events.ts";
import { createLogger } from "../log.ts";
import { PendingWork } from "../pending.ts";
import type { Environment, EnvSession, GenerateRequest, Policy } from "../plugin.ts";
import type { Turn } from "../types.ts";
import { type AttemptDeps, rolloutWithRetries } from "./attempt.ts";
import type { RecordedRollout, ResumePoint } from "./resume.ts";

/**
 * A counter env (its state: the count, saved after each turn) and a policy whose token ids are the conversation's
 * characters: a conversation rebuilt differently would give other ids.
 */
function setup() {
  const steps: number[] = [];
  const dropped: string[] = [];
  const session = (rolloutId: string, start: number): EnvSession => {
    let n = start;
    return {
      start: async () => [
        { role: "system", content: "count" },
        { role: "user", content: "go" },
      ],
      step: async () => {
        n++;
        steps.push(n);
        return { observation: `n=${n}`, done: false, kind: "command" };
      },
      saveState: async () => ({ n }),
      dropState: async () => {
        dropped.push(rolloutId);
      },
      close: async () => {},
    };
  };
  const env: Environment = {
    examples: async () => [],
    open: async (_example, info) => session(info.rolloutId, 0),
    restore: async (_example, info) => {
      if (typeof info.state.n !== "number") throw new Error("snapshot s0-r0-t1 is gone");
      return session(info.rolloutId, info.state.n);
    },
  };
  const weights = { version: 0 };
  const policy: Policy = {
    get version() {
      return weights.version;
    },
    generate: async (request: GenerateRequest) => {
      const text = request.messages.map((m) => `${m.role}:${m.content}`).join("|");
      return {
        action: { text: `reply after ${request.messages.length}`, command: "x" },
        promptTokenIds: Array.from(text, (c) => c.charCodeAt(0)),
        completionTokenIds: [request.turnIndex, 7],
        completionLogprobs: [-0.5, -0.25 * (request.turnIndex + 1)],
        finishReason: "stop",
        policyVersion: policy.version,
        temperature: 1,
      };
    },
  };
  const bus = new EventBus();
  const points: Array<{ turn: Turn; point?: ResumePoint }> = [];
  const starts: Array<Parameters<EventHandlers["rollout:start"]>[0]> = [];
  bus.onAll(
    {
      "turn:end": (e) => {
        points.push({ turn: e.turn, point: e.point });
      },
      "rollout:start": (e) => {
        starts.push(e);
      },
    },
    "test",
  );
  const warnings: string[] = [];
  const deps: AttemptDeps = {
    env,
    policy,
    bus,
    pending: new PendingWork(),
    names: { env: "counter", policy: "echo" },
    maxTurns: 4,
    timeouts: { env_open_ms: 5000, env_step_ms: 5000, generate_ms: 5000, reward_ms: 5000 },
    signal: new AbortController().signal,
    rewards: [],
    retries: 0,
    log: createLogger("test", (level, _source, message) => {
      if (level === "warn") warnings.push(message);
    }),
    policyVersion: () => policy.version,
    resumeRollouts: true,
  };
  return { deps, weights, steps, dropped, points, starts, warnings };
}

const input = {
  rolloutId: "s0-r0",
  example: { id: "x", task: "t" },
  groupId: "0:x",
  step: 0,
  split: "train" as const,
};

/** What the store gives back after a kill following turn `last`: the turns so far and that turn's point. */
function recordedAfter(points: Array<{ turn: Turn; point?: ResumePoint }>, last: number): RecordedRollout {
  const first = points[0]!.point!;
  return {
    rolloutId: "s0-r0",
    step: 0,
    groupId: "0:x",
    exampleId: "x",
    initialMessages: first.initialMessages ?? [],
    turns: points.slice(0, last + 1).map((p) => p.turn),
    point: points[last]!.point!,
    startMs: 1,
  };
}

test("a recorded rollout continues after its last turn: same conversation and token ids as uninterrupted, old versions kept, env steps not redone", async () => {
  const whole = setup();
  const uninterrupted = await rolloutWithRetries(whole.deps, input);
  expect(whole.points.every((p) => p.point !== undefined)).toBe(true);
  expect(whole.points[0]!.point!.initialMessages).toHaveLength(2);
  expect(whole.points[1]!.point!.initialMessages).toBeUndefined();
  expect(whole.dropped).toEqual(["s0-r0"]);

  const resumed = setup();
  resumed.weights.version = 1; // the weights moved on while the run was down
  const recorded = recordedAfter(whole.points, 1);
  const t = await rolloutWithRetries(resumed.deps, { ...input, recorded });
  expect(resumed.starts.map((s) => s.resumedAt)).toEqual([2]);
  expect(resumed.steps).toEqual([3, 4]); // turns 2 and 3 only, from the restored count
  expect(t.turns).toHaveLength(4);
  expect(t.turns.slice(0, 2)).toEqual(recorded.turns);
  expect(t.policyVersions).toEqual([0, 1]);
  expect(t.metrics["resume/turn"]).toBe(2);
  for (const [i, turn] of t.turns.entries()) {
    const want = uninterrupted.turns[i]!;
    expect(turn.promptMessages).toEqual(want.promptMessages);
    expect(Array.from(turn.promptTokenIds)).toEqual(Array.from(want.promptTokenIds));
    expect(turn.observation).toBe(want.observation);
    expect(turn.completionText).toBe(want.completionText);
  }
  expect(t.initialMessages).toEqual(uninterrupted.initialMessages);
  expect(resumed.warnings).toEqual([]);
  expect(resumed.dropped).toEqual(["s0-r0"]);
});

test("a recorded rollout the env cannot restore starts over, with a warning naming it and why", async () => {
  const whole = setup();
  await rolloutWithRetries(whole.deps, input);
  const recorded = recordedAfter(whole.points, 1);
  recorded.point = { ...recorded.point, state: { lost: true } };
  const again = setup();
  const t = await rolloutWithRetries(again.deps, { ...input, recorded });
  expect(again.starts.map((s) => s.resumedAt)).toEqual([undefined]);
  expect(again.steps).toEqual([1, 2, 3, 4]);
  expect(t.metrics["resume/turn"]).toBeUndefined();
  expect(t.turns).toHaveLength(4);
  expect(again.warnings).toEqual([
    "rollout s0-r0 (x) starts over: its state after turn 1 cannot be restored (snapshot s0-r0-t1 is gone)",
  ]);
});

test("resume_rollouts off: no state is saved, no point recorded", async () => {
  const off = setup();
  off.deps.resumeRollouts = false;
  await rolloutWithRetries(off.deps, input);
  expect(off.points.map((p) => p.point)).toEqual([undefined, undefined, undefined, undefined]);
});

test("a recorded rollout that had ended before the kill is taken as it was: no env opened, no step run, rescored", async () => {
  const whole = setup();
  await rolloutWithRetries(whole.deps, input);
  const recorded = { ...recordedAfter(whole.points, 3), stopReason: "max_turns" as const };
  const again = setup();
  let opened = 0;
  const open = again.deps.env.open;
  again.deps.env.open = (example, info) => {
    opened++;
    return open(example, info);
  };
  again.deps.env.restore = async () => {
    throw new Error("not to be restored");
  };
  let scored = 0;
  again.deps.rewards = [
    {
      name: "r",
      weight: 1,
      fn: {
        score: (t) => {
          scored++;
          return { turns: t.turns.map(() => 1) };
        },
      },
    },
  ];
  const t = await rolloutWithRetries(again.deps, { ...input, recorded });
  expect(again.warnings).toEqual([]);
  expect(opened).toBe(0);
  expect(again.steps).toEqual([]);
  expect(t.turns).toEqual(recorded.turns);
  expect(t.stopReason).toBe("max_turns");
  expect(scored).toBe(1);
  expect(t.reward).toBe(4);
  expect(t.metrics["resume/turn"]).toBe(4);
  expect(again.starts.map((s) => s.resumedAt)).toEqual([4]);
});

test("keepState: an ended rollout's state is held until its holder drops it (its step trained), not as the rollout ends", async () => {
  const held = setup();
  const drops: Array<{ step: number; drop: () => Promise<void> }> = [];
  held.deps.keepState = (step, drop) => drops.push({ step, drop });
  await rolloutWithRetries(held.deps, { ...input, step: 3 });
  // rollout:end has been emitted, but a kill now must still find the snapshots the store may need
  expect(held.dropped).toEqual([]);
  expect(drops.map((d) => d.step)).toEqual([3]);
  await drops[0]!.drop();
  expect(held.dropped).toEqual(["s0-r0"]);
});
