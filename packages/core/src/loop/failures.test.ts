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

  test("rollouts that ended before their first turn (a first prompt past the context window) stop the run too", () => {
    const watch = new FailureWatch(2);
    const tooLong = (id: number) =>
      makeTrajectory({ id: `c${id}`, task: "task", stopReason: "context_length" });
    expect(watch.record([tooLong(1), lacks(2)], 0)).toBeUndefined();
    const message = watch.record([tooLong(3), tooLong(4)], 0);
    expect(message).toContain("every rollout failed or ended before its first turn in 2 step(s) in a row");
    expect(message).toContain(
      "(3 of 4 rollouts): ended before its first turn (context_length: the first prompt does not fit the model's context window; raise [model] max_model_len or shorten the prompt)",
    );
    // counted as ok rollouts (not failed), as before
    expect(watch.totals).toEqual({ rolloutsOk: 3, rolloutsFailed: 1, samplesTrained: 0 });
  });
});
