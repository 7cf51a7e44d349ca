import { describe, expect, test } from "bun:test";
import { definePlugin, MIN_RATE_S, z } from "@air/core";
import { probes, type RunTomlOptions, runToml } from "@air/core/testing";

/** Counting env, random policy, last-score reward, mean advantage, per-turn strategy, memory trainer. */
const BASE_TOML = `
logger = []

[run]
name = "itest"
max_steps = 4
seed = 7
log_level = "error"

[orchestrator]
batch_size = 8
rollouts_per_example = 4
max_concurrent_rollouts = 3
max_off_policy_steps = 1
max_turns = 5

[env]
plugin = "counting"

[policy]
plugin = "random"

[trainer]
plugin = "memory"
train_ms = 5

[advantage]
plugin = "mean"

[strategy]
plugin = "per-turn"

[reward]
plugin = "last-score"
`;

const runRecorded = (overrides: Record<string, unknown> = {}, options: RunTomlOptions = {}) =>
  runToml(BASE_TOML, { ...options, overrides });

describe("the RL loop with in-memory plugins", () => {
  test("runs every step, emits events in order and builds groups of rollouts_per_example", async () => {
    const run = await runRecorded();
    expect(run.summary.status).toBe("completed");
    expect(run.summary.stepsCompleted).toBe(4);
    // The memory trainer reports its pretend process around the run; the run's own events come in order.
    const names = run.events.map((e) => e.name).filter((n) => n !== "process:state");
    expect(names[0]).toBe("run:start");
    expect(names.at(-1)).toBe("run:end");
    expect(run.of("step:end").map((e) => e.step)).toEqual([0, 1, 2, 3]);
    expect(run.of("weights:updated").map((e) => e.weights.version)).toEqual([1, 2, 3, 4]);
    for (const step of run.of("step:end")) {
      expect(step.trajectories).toHaveLength(8);
      const groups = new Map<string, number>();
      for (const t of step.trajectories) groups.set(t.groupId, (groups.get(t.groupId) ?? 0) + 1);
      expect([...groups.values()]).toEqual([4, 4]);
      for (const t of step.trajectories) {
        expect(t.step).toBe(step.step);
        expect(t.turns.length).toBeGreaterThan(0);
        expect(t.turns.length).toBeLessThanOrEqual(5);
        expect(t.reward).toBeDefined();
      }
      const turns = step.trajectories.reduce((a, t) => a + t.turns.length, 0);
      expect(step.batch.samples.length).toBe(turns);
      // max_off_policy_steps = 1 lets the next step's requests land in this step's counter too.
      expect(step.metrics["random/requests"]).toBeGreaterThanOrEqual(step.step === 0 ? turns : 1);
      // The rate is over the time since the previous step's line, and left out when that is too short.
      const seconds = step.metrics["time/step_s"]!;
      expect(seconds).toBeGreaterThan(0);
      if (seconds >= MIN_RATE_S)
        expect(step.metrics["throughput/turns_per_s"]).toBeCloseTo(turns / seconds, 6);
      else expect(step.metrics["throughput/turns_per_s"]).toBeUndefined();
    }
    const turnEnds = run.of("turn:end").length;
    const totalTurns = run.of("rollout:end").reduce((a, e) => a + e.trajectory.turns.length, 0);
    expect(turnEnds).toBe(totalTurns);
  });

  test("concurrency never exceeds max_concurrent_rollouts", async () => {
    for (const limit of [1, 3, 8]) {
      const run = await runRecorded({
        orchestrator: { max_concurrent_rollouts: limit, max_off_policy_steps: 2 },
      });
      expect(run.summary.status).toBe("completed");
      expect(run.summary.peakConcurrentRollouts).toBeLessThanOrEqual(limit);
      expect(probes.envPeakOpen).toBeLessThanOrEqual(limit);
      expect(probes.policyPeakInFlight).toBeLessThanOrEqual(limit);
      expect(probes.envPeakOpen).toBe(limit);
      let inFlight = 0;
      let peak = 0;
      for (const e of run.events) {
        if (e.name === "rollout:start") peak = Math.max(peak, ++inFlight);
        if (e.name === "rollout:end") inFlight--;
      }
      expect(peak).toBeLessThanOrEqual(limit);
    }
  });

  test("with max_off_policy_steps = k no sample is trained more than k versions after it was generated", async () => {
    for (const k of [0, 1, 2]) {
      const run = await runRecorded({
        run: { max_steps: 6 },
        orchestrator: { max_off_policy_steps: k, max_concurrent_rollouts: 16 },
        trainer: { train_ms: 30 },
      });
      expect(run.summary.status).toBe("completed");
      let maxLag = 0;
      for (const step of run.of("step:end")) {
        for (const s of step.batch.samples) {
          expect(step.step - s.policyVersion).toBeLessThanOrEqual(k);
          expect(s.policyVersion).toBeLessThanOrEqual(step.step);
          maxLag = Math.max(maxLag, step.step - s.policyVersion);
        }
      }
      // With k > 0 and a slow trainer, some generation really overlaps training.
      if (k > 0) expect(maxLag).toBeGreaterThan(0);
      else expect(maxLag).toBe(0);
    }
  });

  test("a throwing env marks only its rollouts failed; with failed_groups = drop their group leaves the batch", async () => {
    const run = await runRecorded({
      env: { fail_examples: ["ex1"] },
      run: { max_steps: 2 },
      orchestrator: { rollout_retries: 1 },
    });
    expect(run.summary.status).toBe("completed");
    const trajectories = run.of("step:end").flatMap((e) => e.trajectories);
    const failed = trajectories.filter((t) => t.stopReason === "failed");
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((t) => t.exampleId === "ex1")).toBe(true);
    expect(failed.every((t) => /env crashed on ex1/.test(t.error ?? ""))).toBe(true);
    expect(trajectories.filter((t) => t.exampleId !== "ex1").every((t) => t.stopReason !== "failed")).toBe(
      true,
    );
    for (const step of run.of("step:end")) {
      const failedIds = new Set(
        step.trajectories.filter((t) => t.stopReason === "failed").map((t) => t.groupId),
      );
      expect(step.batch.samples.some((s) => failedIds.has(s.groupId))).toBe(false);
      expect(step.metrics["group/dropped"]).toBe(failedIds.size);
    }
    expect(run.logs.some((l) => l.message.includes("attempt 2 failed"))).toBe(true);
  });

  test("failed_groups = keep trains the group's other rollouts", async () => {
    const run = await runRecorded({
      env: { examples: 2, fail_examples: ["ex0"], fail_times: 2 },
      run: { max_steps: 1 },
      orchestrator: { rollout_retries: 0, failed_groups: "keep", max_concurrent_rollouts: 1 },
    });
    const step = run.of("step:end")[0]!;
    const failed = step.trajectories.filter((t) => t.stopReason === "failed");
    expect(failed).toHaveLength(2);
    const kept = step.trajectories.filter((t) => t.exampleId === "ex0" && t.stopReason !== "failed");
    expect(kept).toHaveLength(2);
    expect(step.batch.samples.some((s) => s.groupId === kept[0]!.groupId)).toBe(true);
  });

  test("a retry recovers a rollout whose env failed once", async () => {
    const run = await runRecorded({
      env: { fail_examples: ["ex0"], fail_times: 1 },
      run: { max_steps: 1 },
      orchestrator: { rollout_retries: 1, max_concurrent_rollouts: 1 },
    });
    const step = run.of("step:end")[0]!;
    expect(step.trajectories.every((t) => t.stopReason !== "failed")).toBe(true);
    expect(step.trajectories.some((t) => t.metrics.attempts === 2)).toBe(true);
  });

  test("abort stops the run, closes plugins and reports aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const run = await runRecorded(
      { run: { max_steps: 1000 }, policy: { delay_ms: 5 } },
      { signal: controller.signal },
    );
    expect(run.summary.status).toBe("aborted");
    expect(run.summary.stepsCompleted).toBeLessThan(1000);
    expect(run.of("run:end")[0]?.status).toBe("aborted");
    expect(probes.envOpen).toBe(0);
  });

  test("a step where no rollout ever scores is flagged: zero variance and a warning in the log", async () => {
    const run = await runRecorded({ run: { max_steps: 1 }, policy: { stop_prob: 1 } });
    const step = run.of("step:end")[0]!;
    expect(step.metrics["group/zero_variance_frac"]).toBe(1);
    expect(step.metrics["rollout/no_score_frac"]).toBe(1);
    expect(step.warnings.join(" ")).toContain("zero reward variance");
    expect(run.logs.some((l) => l.message.includes("loss will be 0"))).toBe(true);
  });

  test("eval_every runs the eval split with the trained weights and never trains on it", async () => {
    const run = await runRecorded({ orchestrator: { eval_every: 2 } });
    expect(run.summary.status).toBe("completed");
    const evals = run.of("eval:end");
    expect(evals.map((e) => [e.step, e.policyVersion])).toEqual([
      [1, 2],
      [3, 4],
    ]);
    for (const e of evals) {
      expect(e.trajectories).toHaveLength(3 * 4);
      expect(e.trajectories.every((t) => t.split === "eval" && t.groupId.startsWith("eval:"))).toBe(true);
      expect(e.metrics["eval/rollouts"]).toBe(12);
      expect(e.metrics["eval/counting/reward/mean"]).toBe(e.metrics["eval/reward/mean"]!);
    }
    const trained = run.of("step:end").flatMap((s) => s.batch.samples.map((x) => x.groupId));
    expect(trained.some((g) => g.startsWith("eval:"))).toBe(false);
    expect(run.of("step:end").every((s) => s.trajectories.every((t) => t.split === "train"))).toBe(true);
  });

  test("resume: startStep and initialWeights continue numbering and versions", async () => {
    const run = await runRecorded(
      { run: { max_steps: 5 }, orchestrator: { max_off_policy_steps: 0 } },
      { startStep: 3, initialWeights: { version: 3 } },
    );
    expect(run.summary.status).toBe("completed");
    expect(run.of("step:end").map((e) => e.step)).toEqual([3, 4]);
    const first = run.of("step:end")[0]!;
    expect(first.batch.samples.every((s) => s.policyVersion === 3)).toBe(true);
    expect(run.of("weights:updated").map((e) => e.weights.version)).toEqual([4, 5]);
  });

  test("step 0's time counts from the run's start: creating the plugins is in it", async () => {
    const SLOW_START_MS = 400;
    const slowStart = definePlugin({
      name: "slow-start",
      kind: "logger",
      configSchema: z.object({}),
      create: async () => {
        await Bun.sleep(SLOW_START_MS);
        return { hooks: {} };
      },
    });
    const run = await runRecorded(
      { logger: [{ plugin: "slow-start" }], run: { max_steps: 2 } },
      { plugins: [slowStart] },
    );
    expect(run.summary.status).toBe("completed");
    const [first] = run.of("step:end").map((e) => e.metrics["time/step_s"] ?? 0);
    expect(first).toBeGreaterThanOrEqual(SLOW_START_MS / 1000);
  });
});
