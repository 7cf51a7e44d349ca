import { describe, expect, test } from "bun:test";
import type { ScoreSpec, Turn } from "@air/core";
import { makeTrajectory, makeTurn } from "@air/core/testing";
import { deltaRewards } from "./delta.ts";
import { DELTA_DEFAULTS } from "./options.ts";

describe("on_tamper", () => {
  const spec: ScoreSpec = { priorityMetric: "Score", directions: {}, baseline: { Score: 1 } };
  const turn = (index: number, score: number | undefined, tamper?: string[]): Turn => ({
    ...makeTurn({ index, completionLogprobs: [-0.1] }),
    stepKind: score === undefined ? undefined : "validate",
    ...(score === undefined ? {} : { scores: { Score: score } }),
    ...(tamper ? { info: { tamper } } : {}),
  });
  const trajectory = makeTrajectory({
    task: "game",
    turns: [
      turn(0, 1.2),
      turn(1, undefined, ["writes-evaluation-file"]),
      turn(2, 1.9, ["metric-json"]),
      turn(3, 1.5),
    ],
    score: spec,
  });

  test('"keep" pays flagged turns as usual and counts them', () => {
    const r = deltaRewards(trajectory, DELTA_DEFAULTS);
    expect(r.turns.map((x) => Number(x.toFixed(6)))).toEqual([0.2, 0, 0.7, -0.4]);
    expect(r.metrics.tamper_turns).toBe(2);
  });

  test('"zero" zeroes exactly the flagged turns and keeps their score out of the reference', () => {
    const r = deltaRewards(trajectory, { ...DELTA_DEFAULTS, on_tamper: "zero", terminal_weight: 1 });
    expect(r.turns[1]).toBe(0);
    expect(r.turns[2]).toBe(0);
    expect(r.turns[0]).toBeCloseTo(0.2, 12);
    // turn 3 improves on 1.2 (turn 2's 1.9 never became the reference), plus the terminal bonus 1.5 − 1
    expect(r.turns[3]).toBeCloseTo(0.3 + 0.5, 12);
    expect(r.metrics.tamper_turns).toBe(2);
  });
});
