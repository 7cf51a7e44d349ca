import { describe, expect, test } from "bun:test";
import type { EventPayload, Trajectory } from "@air/core";
import { makeTrajectory } from "@air/core/testing";
import { createProgressView } from "./progress.ts";

const trajectory = (step: number, reward: number, error?: string): Trajectory =>
  makeTrajectory({ step, reward, error, stopReason: error ? "failed" : "done", turns: [] });

function stepEnd(step: number, rewards: number[]): EventPayload<"step:end"> {
  return {
    step,
    trajectories: rewards.map((r) => trajectory(step, r)),
    batch: { schemaVersion: 1, step, samples: [], metrics: {} },
    metrics: { "reward/mean": 0.5, "rollout/count": rewards.length, "rollout/failed": 1, "batch/samples": 3 },
    warnings: ["all groups have zero reward variance"],
  };
}

async function drive(tty: boolean) {
  let out = "";
  const steps: number[] = [];
  let clock = 0;
  const view = createProgressView({
    totalSteps: 3,
    rolloutsPerStep: 2,
    tty,
    write: (t) => {
      out += t;
    },
    onStepEnd: (s) => steps.push(s),
    now: () => clock,
  });
  const h = view.hooks as Required<typeof view.hooks>;
  await h["step:start"]({ step: 0, policyVersion: 0 });
  for (const id of ["a", "b"])
    await h["rollout:start"]({
      rolloutId: id,
      exampleId: "e",
      task: "t",
      groupId: "g",
      step: 0,
      policyVersion: 0,
      attempt: 0,
    });
  clock = 2000;
  await h["turn:end"]({ rolloutId: "a", step: 0, turn: {} as never });
  await h["turn:end"]({ rolloutId: "b", step: 0, turn: {} as never });
  await h["rollout:end"]({ trajectory: trajectory(0, 1) });
  await h["rollout:end"]({ trajectory: trajectory(0, 0, "boom") });
  await h["weights:updated"]({ weights: { version: 1 }, metrics: { "trainer/loss": 0.25 } });
  await h["step:end"](stepEnd(0, [1, 0]));
  view.finish();
  return { out, steps, view };
}

describe("progress view", () => {
  test("plain lines when not a terminal: the console logger's step line, the warning counted not repeated", async () => {
    const { out, steps, view } = await drive(false);
    expect(out).toBe(
      "step 0 (1/3) | reward 0.500 [-, -] | rollouts 1 ok / 1 failed | samples 3 | turns - | zero-var - | " +
        "last loss 0.2500 | 1 warning | 2.0s\n",
    );
    expect(steps).toEqual([0]);
    expect(view.state).toMatchObject({ inFlight: 0, turns: 2, errors: 1, stepsDone: 1, lastReward: 0.5 });
  });

  test("the step line's failed count is the step's rollout/failed metric (the one the store keeps)", async () => {
    let out = "";
    const view = createProgressView({
      totalSteps: 1,
      rolloutsPerStep: 8,
      tty: false,
      write: (t) => (out += t),
    });
    const end = stepEnd(0, [0]);
    end.metrics = { "rollout/count": 8, "rollout/failed": 8 };
    await (view.hooks["step:end"] as (e: EventPayload<"step:end">) => void)(end);
    expect(out).toContain("rollouts 0 ok / 8 failed");
    view.finish();
  });

  test("a redrawn bar per step on a terminal", async () => {
    const { out } = await drive(true);
    expect(out).toContain("\r\x1b[2Kstep 0 (1/3) [##########..........] 1/2 rollouts  in-flight 1");
    expect(out).toContain("[####################] 2/2 rollouts");
    expect(out).toContain("\r\x1b[2Kstep 0 (1/3) | reward 0.500");
  });

  test("the live turns/s is over the time since the first rollout (not the servers' startup), - before 1 s", async () => {
    let out = "";
    let clock = 0;
    const view = createProgressView({
      totalSteps: 1,
      rolloutsPerStep: 1,
      tty: true,
      write: (t) => (out += t),
      now: () => clock,
    });
    const h = view.hooks as Required<typeof view.hooks>;
    clock = 60_000; // a minute of server startup
    await h["step:start"]({ step: 0, policyVersion: 0 });
    const start = {
      rolloutId: "a",
      exampleId: "e",
      task: "t",
      groupId: "g",
      step: 0,
      policyVersion: 0,
      attempt: 0,
    };
    await h["rollout:start"](start);
    expect(out).toContain("turns/s -");
    clock = 62_000;
    for (let i = 0; i < 4; i++) await h["turn:end"]({ rolloutId: "a", step: 0, turn: {} as never });
    await h["rollout:end"]({ trajectory: trajectory(0, 1) });
    expect(out).toContain("turns/s 2.0");
    view.finish();
  });

  test("a periodic eval gets its own line, after wiping a drawn bar", async () => {
    let out = "";
    const view = createProgressView({
      totalSteps: 2,
      rolloutsPerStep: 1,
      tty: true,
      write: (t) => (out += t),
    });
    const h = view.hooks as Required<typeof view.hooks>;
    await h["step:start"]({ step: 1, policyVersion: 1 });
    out = "";
    const metrics = { "eval/rollouts": 4, "eval/failed": 1, "eval/reward/mean": 0.25, "eval/time_s": 1.5 };
    await h["eval:end"]({ step: 1, policyVersion: 2, trajectories: [], metrics });
    expect(out).toBe("\r\x1b[2Keval after step 1 | reward 0.250 | rollouts 3 ok / 1 failed | 1.5s\n");
    view.finish();
  });

  test("clearLine wipes a drawn bar once, and nothing when none is drawn", async () => {
    let out = "";
    const view = createProgressView({
      totalSteps: 1,
      rolloutsPerStep: 1,
      tty: true,
      write: (t) => (out += t),
    });
    view.clearLine();
    expect(out).toBe("");
    await (view.hooks["step:start"] as (e: { step: number; policyVersion: number }) => void)({
      step: 0,
      policyVersion: 0,
    });
    out = "";
    view.clearLine();
    view.clearLine();
    expect(out).toBe("\r\x1b[2K");
    view.finish();
  });
});
