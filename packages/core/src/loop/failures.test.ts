import { describe, expect, test } from "bun:test";
import { makeTrajectory } from "../testing/builders.ts";
import type { Trajectory } from "../types.ts";
import { FailureWatch } from "./failures.ts";

function trajectory(id: number, error?: string): Trajectory {
  return makeTrajectory({
    id: `t${id}`,
    task: "task",
    stopReason: error === undefined ? "done" : "failed",
    ...(error === undefined ? {} : { error }),
  });
}

const lacks = (n: number) => trajectory(n, `the server's answer lacks training data (rollout ${n})`);

describe("FailureWatch", () => {
  test("stops after max_failed_steps steps in a row of all-failed rollouts, naming the most common cause", () => {
    const watch = new FailureWatch(3);
    const step = () => [lacks(1), lacks(2), trajectory(3, "HTTP 500")];
    expect(watch.record(step(), 0)).toBeUndefined();
    expect(watch.record(step(), 0)).toBeUndefined();
    const message = watch.record(step(), 0);
    expect(message).toContain("3 step(s) in a row");
    expect(message).toContain("(6 of 9 rollouts)");
    expect(message).toContain("lacks training data");
    expect(watch.totals).toEqual({ rolloutsOk: 0, rolloutsFailed: 9, samplesTrained: 0 });
  });

  test("a step with a sample resets the streak; totals count every step", () => {
    const watch = new FailureWatch(2);
    expect(watch.record([lacks(1)], 0)).toBeUndefined();
    expect(watch.record([trajectory(2), lacks(3)], 4)).toBeUndefined();
    expect(watch.record([lacks(4)], 0)).toBeUndefined();
    expect(watch.record([lacks(5)], 0)).toContain("2 step(s) in a row");
    expect(watch.totals).toEqual({ rolloutsOk: 1, rolloutsFailed: 4, samplesTrained: 4 });
  });

  test("0 never stops", () => {
    const watch = new FailureWatch(0);
    for (let i = 0; i < 5; i++) expect(watch.record([lacks(i)], 0)).toBeUndefined();
  });
});
