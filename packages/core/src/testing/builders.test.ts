import { describe, expect, test } from "bun:test";
import { SCHEMA_VERSION } from "../types.ts";
import { makeGroup, makeSample, makeTrajectory, makeTurn, turnSample } from "./builders.ts";

describe("builders", () => {
  test("defaults are complete and fields replace them", () => {
    const turn = makeTurn({ index: 1, completionTokenIds: [7, 8], scores: { m: 1 } });
    expect(turn).toMatchObject({
      index: 1,
      promptTokenIds: [1],
      completionLogprobs: [-1, -1],
      scores: { m: 1 },
    });
    const t = makeTrajectory({ id: "a", turns: [makeTurn(), turn], reward: 2 });
    expect(t).toMatchObject({ schemaVersion: SCHEMA_VERSION, id: "a", groupId: "0:e", stopReason: "done" });
    expect(makeGroup("g", [t])).toEqual({ id: "g", exampleId: "g", step: 0, trajectories: [t] });
    expect(makeSample({ advantages: [0, 0, 1] }).advantages).toEqual([0, 0, 1]);
  });

  test("turnSample masks the prompt and keeps the completion's logprobs", () => {
    const turn = makeTurn({
      index: 3,
      promptTokenIds: [1, 2],
      completionTokenIds: [3],
      completionLogprobs: [-0.5],
    });
    const s = turnSample(makeTrajectory({ id: "x", turns: [turn] }), turn);
    expect(s).toMatchObject({
      trajectoryId: "x",
      tokenIds: [1, 2, 3],
      lossMask: [0, 0, 1],
      logprobs: [0, 0, -0.5],
      spans: [{ turn: 3, start: 2, end: 3 }],
    });
  });
});
