import { expect, test } from "bun:test";
import { envStepsToReach, type LearnRun } from "./tree-learn.ts";

const run = (rewards: number[], envSteps: number[]): LearnRun => ({
  label: "x",
  wallS: 0,
  code: 0,
  steps: rewards.map((reward, step) => ({
    step,
    reward,
    envSteps: envSteps[step] ?? 0,
    zeroVarianceFrac: 0,
    advantageStd: 0,
    lossTokens: 0,
  })),
});

test("env steps to a reward: cumulative env steps at the end of the first step that reached it", () => {
  expect(envStepsToReach(run([0.1, 0.2, 0.3, 0.1], [20, 24, 22, 20]), 0.25)).toBe(66);
  expect(envStepsToReach(run([0.3], [20]), 0.25)).toBe(20);
  expect(envStepsToReach(run([0.1, 0.2], [20, 20]), 0.25)).toBeUndefined();
});
