import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { probes } from "./plugins/index.ts";
import { runToml } from "./run.ts";

const CONFIG = {
  logger: [],
  run: { name: "kit", max_steps: 2, seed: 3, log_level: "error" },
  orchestrator: { batch_size: 4, rollouts_per_example: 2, max_turns: 3, max_off_policy_steps: 0 },
  env: { plugin: "counting", examples: 2 },
  policy: { plugin: "random", delay_ms: 0 },
  trainer: { plugin: "memory" },
  advantage: { plugin: "mean" },
  strategy: { plugin: "per-turn" },
  reward: { plugin: "last-score" },
};

describe("runToml", () => {
  test("runs an object config through loadConfig + startRun and records events, logs and batches", async () => {
    const run = await runToml(CONFIG);
    expect(run.summary).toMatchObject({ status: "completed", stepsCompleted: 2 });
    // The memory trainer reports its "process" as it is created, before the run starts.
    expect(run.events.map((e) => e.name).slice(0, 2)).toEqual(["process:state", "run:start"]);
    expect(run.events.at(-1)?.name).toBe("run:end");
    expect(run.steps.map((s) => s.step)).toEqual([0, 1]);
    expect(run.of("weights:updated").map((e) => e.weights.version)).toEqual([1, 2]);
    expect(run.trajectories).toHaveLength(8);
    expect(run.batches).toEqual(run.steps.map((s) => s.batch));
    expect(run.batches[0]!.samples.length).toBe(
      run.steps[0]!.trajectories.reduce((a, t) => a + t.turns.length, 0),
    );
    expect(run.of("process:state").map((e) => e.state)).toEqual(["running", "exited"]);
    expect(probes.envOpen).toBe(0);
    expect(existsSync(run.dir)).toBe(false);
  });

  test("the same seed gives the same rollouts; overrides apply; every log line is kept", async () => {
    // log_level = "error" filters stderr only: the warning about a step that cannot learn is recorded.
    const silent = await runToml(CONFIG, { overrides: { run: { max_steps: 1 }, policy: { stop_prob: 1 } } });
    expect(silent.logs.some((l) => l.level === "warn" && /loss will be 0/.test(l.message))).toBe(true);
    expect(silent.of("log").some((l) => /loss will be 0/.test(l.message))).toBe(true);
    expect(silent.events.some((e) => e.name === "log")).toBe(false);
    const texts = async (seed: number) =>
      (await runToml(CONFIG, { overrides: { run: { seed, max_steps: 1 } } })).trajectories
        .map((t) => t.turns.map((x) => x.action.text).join(","))
        .sort();
    const a = await texts(3);
    expect(a).toHaveLength(4);
    expect(await texts(3)).toEqual(a);
    expect(await texts(4)).not.toEqual(a);
  });

  test("text with {{dir}}; a given dir is kept; config errors reject", async () => {
    const dir = mkdtempSync(join(tmpdir(), "air-kit-"));
    try {
      const toml = `logger = []\n[run]\nname = "t"\noutput_dir = "{{dir}}/out"\nmax_steps = 1\n[orchestrator]\nbatch_size = 2\nrollouts_per_example = 2\n[env]\nplugin = "guess"\n[policy]\nplugin = "guesser"\n[trainer]\nplugin = "memory"\n[advantage]\nplugin = "mean"\n[strategy]\nplugin = "per-turn"\n[reward]\nplugin = "last-score"\n`;
      const run = await runToml(toml, { dir });
      expect(run.summary.status).toBe("completed");
      expect(run.runDir).toBe(join(dir, "out", "t"));
      expect(existsSync(join(dir, "run.toml"))).toBe(true);
      await expect(runToml({ ...CONFIG, env: { plugin: "counting", exampels: 2 } })).rejects.toThrow(
        /env\.exampels: unknown key/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("object configs: arrays of tables and undefined keys become TOML; other values are refused", async () => {
    const run = await runToml({
      ...CONFIG,
      run: { ...CONFIG.run, max_steps: 1, output_dir: undefined },
      reward: [
        { plugin: "last-score", name: "a" },
        { plugin: "last-score", name: "b", weight: 0.5 },
      ],
    });
    expect(run.summary.status).toBe("completed");
    const scored = run.trajectories.find((t) => t.reward !== 0);
    expect(scored?.rewardBreakdown?.b).toBe(scored?.rewardBreakdown?.a);
    expect(scored?.reward).toBeCloseTo(1.5 * (scored?.rewardBreakdown?.a ?? Number.NaN), 9);
    await expect(runToml({ ...CONFIG, env: { plugin: "counting", examples: () => 2 } })).rejects.toThrow(
      /config\.env\.examples is not a TOML value/,
    );
  });

  test("an abort signal stops the run", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const run = await runToml(CONFIG, {
      signal: controller.signal,
      overrides: { run: { max_steps: 10_000 }, policy: { delay_ms: 2 } },
    });
    expect(run.summary.status).toBe("aborted");
    expect(run.summary.stepsCompleted).toBeLessThan(10_000);
  });
});
