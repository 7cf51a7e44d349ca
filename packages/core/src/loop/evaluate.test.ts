import { expect, test } from "bun:test";
import { z } from "zod";
import type { EventPayload } from "../events.ts";
import { definePlugin, type EnvSession } from "../plugin.ts";
import { runToml } from "../testing/index.ts";
import type { RecordedRollout } from "./resume.ts";

/** What the plugins below saw, in order: env steps, dropped states, eval:end and step:start. */
const timeline: string[] = [];
/** What the store logger answers on the resumed run. */
const store: {
  recorded: RecordedRollout[];
  evalRecorded?: (step: number) => boolean;
  /** Called at each eval turn's end (a test aborts the run there). */
  onEvalTurn?: () => void;
} = { recorded: [] };

/** Env `tally`: a counter per session (its state), saved after each turn; train example t0, eval examples v0, v1. */
const tallyEnv = definePlugin({
  name: "tally",
  kind: "env",
  configSchema: z.object({}),
  create: () => {
    const session = (rolloutId: string, start: number): EnvSession => {
      let n = start;
      return {
        start: async () => [
          { role: "user", content: `count from ${rolloutId.startsWith("e") ? "eval" : "train"}` },
        ],
        step: async () => {
          n++;
          timeline.push(`step ${rolloutId} n=${n}`);
          return { observation: `n=${n}`, done: false, kind: "command" };
        },
        saveState: async () => ({ n }),
        dropState: async () => {
          timeline.push(`drop ${rolloutId}`);
        },
        close: async () => {},
      };
    };
    return {
      examples: async (split) =>
        split === "train"
          ? [{ id: "t0", task: "t" }]
          : [
              { id: "v0", task: "t" },
              { id: "v1", task: "t" },
            ],
      keepStates: async (ids) => {
        timeline.push(`keep ${ids.join(",")}`);
      },
      open: async (_example, info) => session(info.rolloutId, 0),
      restore: async (_example, info) => {
        if (typeof info.state.n !== "number") throw new Error("no count");
        return session(info.rolloutId, info.state.n);
      },
    };
  },
});

/** Policy `echo`: its reply and token ids are the conversation's characters (a rebuilt one must be the same). */
const echoPolicy = definePlugin({
  name: "echo",
  kind: "policy",
  configSchema: z.object({}),
  create: () => {
    let version = 0;
    return {
      get version() {
        return version;
      },
      loadWeights: async (weights) => {
        version = weights.version;
      },
      generate: async (request) => {
        const text = request.messages.map((m) => `${m.role}:${m.content}`).join("|");
        return {
          action: { text: `reply ${text.length}`, command: "x" },
          promptTokenIds: Array.from(text, (c) => c.charCodeAt(0)),
          completionTokenIds: [request.turnIndex, 7],
          completionLogprobs: [-0.5, -0.25],
          finishReason: "stop",
          policyVersion: version,
          temperature: 1,
        };
      },
    };
  },
});

/** Logger `store`: a run store's answers on `rl --resume` (`recordedRollouts`, `evalRecorded`), and the order of events. */
const storeLogger = definePlugin({
  name: "store",
  kind: "logger",
  configSchema: z.object({}),
  create: () => ({
    hooks: {
      "eval:end": (e) => {
        timeline.push(`eval:end ${e.step} v${e.policyVersion}`);
      },
      "step:start": (e) => {
        timeline.push(`step:start ${e.step}`);
      },
      "turn:end": (e) => {
        if (e.rolloutId.startsWith("e")) store.onEvalTurn?.();
      },
    },
    recordedRollouts: () => store.recorded,
    ...(store.evalRecorded ? { evalRecorded: store.evalRecorded } : {}),
  }),
});

const plugins = [tallyEnv, echoPolicy, storeLogger];

function config(maxSteps: number) {
  return {
    logger: [{ plugin: "store" }],
    run: { name: "eval-resume", max_steps: maxSteps },
    orchestrator: {
      batch_size: 2,
      rollouts_per_example: 2,
      max_turns: 3,
      max_off_policy_steps: 0,
      eval_every: 1,
    },
    env: { plugin: "tally" },
    policy: { plugin: "echo" },
    reward: { plugin: "last-score" },
    advantage: { plugin: "mean" },
    strategy: { plugin: "per-turn" },
    trainer: { plugin: "memory" },
  };
}

type TurnEnd = EventPayload<"turn:end">;

/** What the store would give back of eval rollout `id` after its turn `last` (`stopReason`: it had ended). */
function recordedAfter(
  turnEnds: TurnEnd[],
  id: string,
  last: number,
  stopReason?: RecordedRollout["stopReason"],
): RecordedRollout {
  const own = turnEnds.filter((e) => e.rolloutId === id);
  const example = ["e0-r2", "e0-r3"].includes(id) ? "v0" : "v1";
  return {
    rolloutId: id,
    step: 0,
    groupId: `eval:0:${example}`,
    exampleId: example,
    initialMessages: own[0]!.point!.initialMessages!,
    turns: own.slice(0, last + 1).map((e) => e.turn),
    point: own[last]!.point!,
    startMs: 1,
    ...(stopReason ? { stopReason } : {}),
  };
}

test("an eval cut short by a crash runs on resume before the next step: in-flight eval rollouts continue from their last turn, ended ones are taken as recorded, eval:end once for its step with its weights", async () => {
  store.recorded = [];
  store.evalRecorded = undefined;
  timeline.length = 0;
  const whole = await runToml(config(1), { plugins });
  expect(whole.summary.status).toBe("completed");
  const evalTurns = whole.of("turn:end").filter((e) => e.rolloutId.startsWith("e0-"));
  // eval turns record resume points too (resume_rollouts is on by default)
  expect(evalTurns).toHaveLength(4 * 3);
  expect(evalTurns.every((e) => e.point !== undefined)).toBe(true);
  const evalIds = [...new Set(evalTurns.map((e) => e.rolloutId))].sort();
  expect(evalIds).toEqual(["e0-r2", "e0-r3", "e0-r4", "e0-r5"]);
  const uninterrupted = whole.of("eval:end")[0]!;
  expect(uninterrupted.policyVersion).toBe(1);

  // killed during that eval: e0-r2 in flight after its turn 0, e0-r3 had ended; e0-r4, e0-r5 not recorded
  store.recorded = [recordedAfter(evalTurns, "e0-r2", 0), recordedAfter(evalTurns, "e0-r3", 2, "max_turns")];
  store.evalRecorded = (step) => step !== 0;
  timeline.length = 0;
  const resumed = await runToml(config(2), {
    plugins,
    startStep: 1,
    initialWeights: { version: 1 },
    context: { resume: { startStep: 1, rollouts: true } },
  });
  expect(resumed.summary.status).toBe("completed");
  expect(resumed.logs.map((l) => l.message)).toContain(
    "the eval after step 0 was cut short: it runs again before step 1",
  );
  // the eval of step 0 once, with the weights it followed, before step 1 starts; then step 1's own eval
  expect(resumed.of("eval:end").map((e) => [e.step, e.policyVersion])).toEqual([
    [0, 1],
    [1, 2],
  ]);
  expect(timeline.indexOf("eval:end 0 v1")).toBeLessThan(timeline.indexOf("step:start 1"));
  const eval0 = resumed.of("eval:end")[0]!;
  expect(eval0.trajectories).toHaveLength(4);
  expect(eval0.metrics["eval/rollouts"]).toBe(4);
  const byId = new Map(eval0.trajectories.map((t) => [t.id, t]));
  // the in-flight one: turns 1 and 2 only, from the restored count; the whole conversation as uninterrupted
  expect(timeline.filter((l) => l.startsWith("step e0-r2 "))).toEqual(["step e0-r2 n=2", "step e0-r2 n=3"]);
  const continued = byId.get("e0-r2")!;
  expect(continued.metrics["resume/turn"]).toBe(1);
  const want = evalTurns.filter((e) => e.rolloutId === "e0-r2").map((e) => e.turn);
  expect(continued.turns.map((t) => [t.completionText, t.observation, Array.from(t.promptTokenIds)])).toEqual(
    want.map((t) => [t.completionText, t.observation, Array.from(t.promptTokenIds)]),
  );
  expect(continued.turns[0]).toBe(store.recorded[0]!.turns[0]!);
  // the ended one: taken as recorded, no env step
  expect(timeline.some((l) => l.startsWith("step e0-r3 "))).toBe(false);
  expect(byId.get("e0-r3")!.turns).toEqual(store.recorded[1]!.turns);
  // the two never recorded run whole, under new ids (never a recorded one's)
  const fresh = eval0.trajectories.filter((t) => t.id !== "e0-r2" && t.id !== "e0-r3");
  expect(fresh.map((t) => t.turns.length)).toEqual([3, 3]);
  // the eval's states go once it ended (no training to wait for), before step 1 starts
  const drops = timeline.filter((l) => l.startsWith("drop e0-"));
  expect(drops.sort()).toEqual(["drop e0-r0", "drop e0-r1", "drop e0-r2"]);
  // the ended one's state is not kept at all: taken as recorded, it is never restored
  expect(timeline.filter((l) => l.startsWith("keep "))).toEqual(["keep e0-r2"]);
  for (const d of drops) {
    expect(timeline.indexOf(d)).toBeGreaterThan(timeline.indexOf("eval:end 0 v1"));
    expect(timeline.indexOf(d)).toBeLessThan(timeline.indexOf("step:start 1"));
  }
});

test("on resume, an eval the store recorded as ended is not run again; with no store answering, it is not either (a warning says why)", async () => {
  for (const answer of [() => true, undefined]) {
    store.recorded = [];
    store.evalRecorded = answer;
    timeline.length = 0;
    const resumed = await runToml(config(2), { plugins, startStep: 1, initialWeights: { version: 1 } });
    expect(resumed.summary.status).toBe("completed");
    expect(resumed.of("eval:end").map((e) => e.step)).toEqual([1]);
    const warned = resumed.logs.some(
      (l) => l.level === "warn" && l.message.includes("eval after step 0 is not run again"),
    );
    expect(warned).toBe(answer === undefined);
  }
  // a resume where no eval followed the last trained step asks nothing and runs none first
  store.evalRecorded = () => false;
  const offCycle = await runToml(
    { ...config(3), orchestrator: { ...config(3).orchestrator, eval_every: 2 } },
    {
      plugins,
      startStep: 1,
      initialWeights: { version: 1 },
    },
  );
  expect(offCycle.of("eval:end").map((e) => e.step)).toEqual([1]);
});

test("an eval cut short by the run's abort (SIGINT) emits no eval:end and keeps its states: --resume runs it again", async () => {
  store.recorded = [];
  store.evalRecorded = undefined;
  timeline.length = 0;
  const controller = new AbortController();
  store.onEvalTurn = () => controller.abort();
  try {
    const aborted = await runToml(config(2), { plugins, signal: controller.signal });
    expect(aborted.summary.status).toBe("aborted");
    expect(aborted.of("eval:end")).toEqual([]);
    expect(timeline.filter((l) => l.startsWith("drop e0-"))).toEqual([]);
    const evalEnds = aborted.of("rollout:end").filter((e) => e.trajectory.split === "eval");
    // each stopped after its turn, "aborted": the store keeps it as in flight, to continue
    expect(evalEnds.map((e) => [e.trajectory.stopReason, e.trajectory.turns.length])).toEqual(
      evalEnds.map(() => ["aborted", 1]),
    );
    expect(evalEnds).toHaveLength(4);
  } finally {
    store.onEvalTurn = undefined;
  }
});
