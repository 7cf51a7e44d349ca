import { describe, expect, test } from "bun:test";
import type { Message, Trajectory, Turn } from "@air/core";
import { makeTrajectory, makeTurn } from "@air/core/testing";
import { logprobMean, promptBase, rebuildPrompts, summarizeTrajectory, tailFromPrevious } from "./summary.ts";

const msg = (role: Message["role"], content: string): Message => ({ role, content });

function turn(index: number, scores?: Record<string, number>): Turn {
  return makeTurn({
    index,
    promptTokenIds: [],
    completionTokenIds: [],
    scores,
    stepKind: scores ? "validate" : undefined,
  });
}

function trajectory(turns: Turn[], direction: "maximize" | "minimize"): Trajectory {
  return makeTrajectory({
    id: "r",
    turns,
    score: { priorityMetric: "rmse", directions: { rmse: direction }, baseline: { rmse: 10 } },
  });
}

describe("summarizeTrajectory", () => {
  test("improvement follows the metric direction", () => {
    const turns = [turn(0), turn(1, { rmse: 9, r2: 0.8 }), turn(2, { rmse: 7 })];
    const min = summarizeTrajectory(trajectory(turns, "minimize"));
    expect(min.finalScore).toBe(7);
    expect(min.improvement).toBe(3);
    expect(min.validationHistory).toEqual([
      { turn: 1, score: 9, kind: "validate" },
      { turn: 2, score: 7, kind: "validate" },
    ]);
    expect(summarizeTrajectory(trajectory(turns, "maximize")).improvement).toBe(-3);
  });

  test("a trajectory that never validated has no final score", () => {
    const s = summarizeTrajectory(trajectory([turn(0)], "maximize"));
    expect(s).toMatchObject({ finalScore: null, improvement: null, validated: false, baselineScore: 10 });
  });
});

describe("prompt deltas", () => {
  test("stores only the tail when the prompt extends the previous one", () => {
    const p0 = [msg("system", "s"), msg("user", "u")];
    const p1 = [...p0, msg("assistant", "a"), msg("user", "o")];
    const rewritten = [msg("system", "s"), msg("user", "summary")];
    expect(promptBase(undefined, p0)).toBe(0);
    expect(promptBase(p0, p1)).toBe(2);
    expect(promptBase(p1, rewritten)).toBe(0);
    const stored = [
      { promptBase: 0, promptMessages: p0 },
      { promptBase: 2, promptMessages: p1.slice(2) },
      { promptBase: 0, promptMessages: rewritten },
    ];
    expect(rebuildPrompts(stored)).toEqual([p0, p1, rewritten]);
  });

  test("a tail that is the previous turn's reply and observation is a reference, rebuilt from that turn", () => {
    const p0 = [msg("system", "s"), msg("user", "u")];
    const p1 = [...p0, msg("assistant", "a"), msg("user", "o")];
    const previous = { completionText: "a", observation: "o" };
    expect(tailFromPrevious(p1.slice(2), previous)).toBe(true);
    expect(tailFromPrevious(p1.slice(2), { completionText: "a", observation: "other" })).toBe(false);
    expect(tailFromPrevious([msg("user", "a"), msg("user", "o")], previous)).toBe(false);
    expect(tailFromPrevious(p1.slice(1), previous)).toBe(false);
    expect(tailFromPrevious(p1.slice(2), undefined)).toBe(false);
    const stored = [
      { promptBase: 0, promptMessages: p0, completion: "a", observation: "o" },
      { promptBase: 2, promptMessages: [], fromPrevious: true, completion: "b", observation: "q" },
      { promptBase: 4, promptMessages: [], fromPrevious: true },
    ];
    expect(rebuildPrompts(stored)).toEqual([p0, p1, [...p1, msg("assistant", "b"), msg("user", "q")]]);
  });
});

test("logprobMean leaves out the tokens without a logprob (completionMask 0), null when none has one", () => {
  const logprobs = Float32Array.from([-1, 0, -3, 0]);
  expect(logprobMean(makeTurn({ completionLogprobs: logprobs }))).toBeCloseTo(-1, 6);
  expect(logprobMean(makeTurn({ completionLogprobs: logprobs, completionMask: [1, 0, 1, 0] }))).toBeCloseTo(
    -2,
    6,
  );
  expect(
    logprobMean(makeTurn({ completionLogprobs: Float32Array.from([0]), completionMask: [0] })),
  ).toBeNull();
  expect(logprobMean(makeTurn({ completionLogprobs: new Float32Array(0) }))).toBeNull();
});
