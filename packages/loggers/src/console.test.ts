import { describe, expect, test } from "bun:test";
import { definePlugin, type EventHandlers, type EventPayload, type Trajectory, z } from "@air/core";
import { makeContext, runToml } from "@air/core/testing";
import { consoleHooks, consoleLogger, consoleLoggerConfig } from "./console.ts";

const stepEnd = (metrics: Record<string, number>, warnings: string[]): EventPayload<"step:end"> => ({
  step: 4,
  trajectories: [],
  batch: { schemaVersion: 1, step: 4, samples: [], metrics: {} },
  metrics,
  warnings,
});

describe("console logger", () => {
  test("one line per step: reward, rollouts ok/failed, samples from the step's metrics; warnings and error logs counted", async () => {
    const lines: string[] = [];
    let clock = 0;
    const { hooks } = consoleHooks((l) => lines.push(l), { showWarnings: false, now: () => clock });
    const h = hooks as Required<EventHandlers>;
    await h["step:start"]({ step: 4, policyVersion: 3 });
    await h.log({ level: "error", source: "env", message: "boom", timeMs: 0 });
    await h.log({ level: "warn", source: "env", message: "meh", timeMs: 0 });
    await h["weights:updated"]({ weights: { version: 4 }, metrics: { "trainer/loss": 0.25 } });
    clock = 1500;
    const metrics = {
      "reward/mean": 0.5,
      "reward/min": 0,
      "reward/max": 1,
      "rollout/count": 8,
      "rollout/failed": 3,
      "batch/samples": 20,
      "rollout/turns/mean": 2.5,
      "rollout/no_score_frac": 0.25,
      "group/zero_variance_frac": 1,
    };
    await h["step:end"](stepEnd(metrics, ["every group has zero reward variance"]));
    expect(lines).toEqual([
      "step 4 | reward 0.500 [0.00, 1.00] | rollouts 5 ok / 3 failed | samples 20 | turns 2.5 | no-score 25% | " +
        "zero-var 100% | last loss 0.2500 | 1 warning | 1 error log | 1.5s\n",
    ]);
    await h["step:end"](stepEnd({}, []));
    expect(lines[1]).not.toContain("error log");
    expect(lines[1]).toEndWith("| 1.5s\n");
    await h["step:end"](stepEnd({ "time/step_s": 0.25 }, []));
    expect(lines[2]).toEndWith("| 0.3s\n");
    await h["run:end"]({ status: "failed", error: "trainer died", unsettled: [] });
    expect(lines[3]).toBe("run failed: trainer died\n");
  });

  test("a rate the loop left out (step too short) reads –; a column the run cannot produce is not shown", async () => {
    const lines: string[] = [];
    const { hooks } = consoleHooks((l) => lines.push(l), { showWarnings: false });
    const h = hooks as Required<EventHandlers>;
    await h["step:end"](stepEnd({ "time/step_s": 0.01, "group/zero_variance_frac": 0 }, []));
    expect(lines[0]).toContain("| turns/s – |");
    expect(lines[0]).not.toContain("no-score");
    expect(lines[0]).not.toContain("parse-err");
    await h["step:end"](
      stepEnd({ "time/step_s": 2, "throughput/turns_per_s": 4, "rollout/parse_error_frac": 0.5 }, []),
    );
    expect(lines[1]).toContain("| parse-err 50% | zero-var - | turns/s 4.0 |");
  });

  test("show_warnings repeats each warning under the step line", async () => {
    const lines: string[] = [];
    const { hooks } = consoleHooks((l) => lines.push(l), { showWarnings: true });
    await (hooks as Required<EventHandlers>)["step:end"](stepEnd({}, ["w1"]));
    expect(lines[1]).toBe("  warning: w1\n");
  });

  test("a real run: each step's line once; each warning once, in the run's log", async () => {
    const printed: string[] = [];
    const capture = definePlugin({
      name: "console-capture",
      kind: "logger",
      configSchema: consoleLoggerConfig,
      create: (config) => consoleHooks((l) => printed.push(l), { showWarnings: config.show_warnings }),
    });
    const zero = definePlugin({
      name: "zero",
      kind: "reward",
      configSchema: z.object({}),
      create: () => ({ score: (t: Trajectory) => ({ turns: t.turns.map(() => 0) }) }),
    });
    const run = await runToml(
      `logger = [{ plugin = "console-capture" }]
[run]
name = "console"
max_steps = 2
[orchestrator]
batch_size = 4
rollouts_per_example = 2
max_turns = 2
[env]
plugin = "counting"
[policy]
plugin = "random"
[trainer]
plugin = "memory"
[advantage]
plugin = "mean"
[strategy]
plugin = "per-turn"
[reward]
plugin = "zero"
`,
      { plugins: [capture, zero] },
    );
    expect(run.summary.status).toBe("completed");
    expect(printed.filter((l) => l.startsWith("step ")).map((l) => l.split(" |")[0])).toEqual([
      "step 0",
      "step 1",
    ]);
    const warnings = run.steps.flatMap((s) => s.warnings);
    expect(warnings.length).toBeGreaterThan(0);
    for (const w of new Set(warnings)) {
      const inLog = run.logs.filter((l) => l.level === "warn" && l.message === w).length;
      const inLines = printed.filter((l) => l.includes(w)).length;
      expect(inLog + inLines).toBe(warnings.filter((x) => x === w).length);
    }
    expect(printed.filter((l) => l.startsWith("step ")).every((l) => l.includes("warning"))).toBe(true);
  });

  test("tells the launcher it prints step lines (rl leaves it out and prints them itself), and prints them otherwise", async () => {
    const config = consoleLoggerConfig.parse({});
    expect(consoleLogger.launch?.printsStepLines?.(config)).toBe(true);
    const created = await consoleLogger.create(config, makeContext());
    expect(Object.keys(created.hooks ?? {})).toContain("step:end");
  });
});
