import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AirError } from "@air/core";
import TOML from "@iarna/toml";
import { primeRlTrainerConfig } from "./config.ts";
import { readStepMetrics } from "./metrics.ts";
import plugin from "./plugin.ts";
import { testContext, testSample } from "./testing.ts";

const FAKE_TRAINER = join(import.meta.dir, "fixtures", "fake_trainer.py");
const dirs: string[] = [];
const procs: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(() => {
  for (const p of procs) p.kill();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function setup(extra: Record<string, unknown> = {}) {
  const ctx = testContext();
  dirs.push(ctx.runDir);
  const config = plugin.configSchema.parse({
    prime_rl_version: "0.8",
    poll_ms: 20,
    metrics_wait_ms: 5_000,
    ...extra,
  });
  return { ctx, config };
}

describe("prime-rl trainer plugin with a fake prime-rl trainer", () => {
  test("submit → STABLE → WeightsRef with version step + 1 and the trainer's metrics", async () => {
    const { ctx, config } = setup();
    const trainer = await plugin.create(config, ctx);
    const runDir = join(ctx.runDir, "prime-rl", "run_default");
    const metricsFile = join(ctx.runDir, "prime-rl", "metrics.jsonl");
    const proc = Bun.spawn(["/usr/bin/python3", FAKE_TRAINER, runDir, metricsFile, "3"], { stderr: "pipe" });
    procs.push(proc);
    const samples = [testSample([1, 2, 3], [300, 256], [-1, 0], 1), testSample([4], [301], [-2], -1)];
    for (let step = 0; step < 3; step++) {
      await trainer.submit({
        schemaVersion: 1,
        step,
        samples: samples.slice(0, 1 + (step % 2)),
        metrics: {},
      });
      const weights = await trainer.waitForWeights(step, AbortSignal.timeout(20_000));
      expect(weights).toMatchObject({
        version: step + 1,
        kind: "full",
        path: join(runDir, "broadcasts", `step_${step + 1}`),
      });
      expect(weights?.metrics).toEqual({
        "trainer/loss": 1 + (step % 2),
        "trainer/grad_norm": step % 2 ? 3 : 2,
        "trainer/lr": 1e-6,
        "trainer/entropy": 0.5,
        "trainer/mismatch_kl": 0.001,
      });
    }
    const code = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => "hung")]);
    expect(code).toBe(0);
  });

  test("waitForWeights times out, and stops on abort", async () => {
    const { ctx, config } = setup({ weights_timeout_ms: 150 });
    const trainer = await plugin.create(config, ctx);
    const error = await trainer.waitForWeights(0, new AbortController().signal).catch((e) => e);
    expect(error).toBeInstanceOf(AirError);
    expect((error as AirError).code).toBe("TIMEOUT");
    const slow = await plugin.create({ ...config, weights_timeout_ms: 60_000 }, ctx);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    const aborted = await slow.waitForWeights(0, abort.signal).catch((e) => e);
    expect((aborted as AirError).code).toBe("ABORTED");
  });

  test("a STABLE already there before its batch means a stale run dir", async () => {
    const { ctx, config } = setup({ run_dir: "elsewhere/run_x", lora: true, metrics_wait_ms: 0 });
    const trainer = await plugin.create(config, ctx);
    const stable = join(ctx.configDir, "elsewhere", "run_x", "broadcasts", "step_1");
    mkdirSync(stable, { recursive: true });
    writeFileSync(join(stable, "STABLE"), "");
    const error = await trainer
      .submit({ schemaVersion: 1, step: 0, samples: [testSample([1], [300], [-1], 1)], metrics: {} })
      .catch((e) => e);
    expect(String(error)).toContain("stale run dir");
    const control = TOML.parse(
      readFileSync(join(ctx.configDir, "elsewhere", "run_x", "control", "orch.toml"), "utf8"),
    );
    expect(control).toMatchObject({
      model: { name: "tiny", lora: { rank: 16, alpha: 32 } },
      rollout_transport: { type: "filesystem" },
    });
    const weights = await trainer.waitForWeights(0, new AbortController().signal);
    expect(weights).toMatchObject({ version: 1, kind: "lora", metrics: {} });
  });

  test("an empty batch is not sent: no weights for it, and the next batch takes the next prime-rl step", async () => {
    const { ctx, config } = setup({ metrics_wait_ms: 0 });
    const trainer = await plugin.create(config, ctx);
    const runDir = join(ctx.runDir, "prime-rl", "run_default");
    await trainer.submit({ schemaVersion: 1, step: 0, samples: [], metrics: {} });
    expect(await trainer.waitForWeights(0, new AbortController().signal)).toBeNull();
    expect(existsSync(join(runDir, "rollouts"))).toBe(false);
    await trainer.submit({
      schemaVersion: 1,
      step: 1,
      samples: [testSample([1], [300], [-1], 1)],
      metrics: {},
    });
    expect(existsSync(join(runDir, "rollouts", "step_1", "train_rollouts.bin"))).toBe(true);
    mkdirSync(join(runDir, "broadcasts", "step_1"), { recursive: true });
    writeFileSync(join(runDir, "broadcasts", "step_1", "STABLE"), "");
    const weights = await trainer.waitForWeights(1, AbortSignal.timeout(5_000));
    expect(weights).toMatchObject({ version: 2, path: join(runDir, "broadcasts", "step_1") });
  });

  test("samples prime-rl would evict the run for are refused; an eviction stops the wait", async () => {
    const { ctx, config } = setup({ max_sample_tokens: 4 });
    const trainer = await plugin.create(config, ctx);
    const long = testSample([1, 2, 3, 4], [300], [-1], 1);
    const error = await trainer
      .submit({ schemaVersion: 1, step: 0, samples: [long], metrics: {} })
      .catch((e) => e);
    expect(String(error)).toContain("has 5 tokens (allowed: 1..4)");
    const empty = { ...long, tokenIds: [], lossMask: [], logprobs: [], advantages: [] };
    const error2 = await trainer
      .submit({ schemaVersion: 1, step: 0, samples: [empty], metrics: {} })
      .catch((e) => e);
    expect(String(error2)).toContain("has 0 tokens");
    const runDir = join(ctx.runDir, "prime-rl", "run_default");
    setTimeout(
      () => writeFileSync(join(runDir, "control", "evicted.txt"), "Run wrote a batch with no samples"),
      50,
    );
    const evicted = await trainer.waitForWeights(0, AbortSignal.timeout(5_000)).catch((e) => e);
    expect((evicted as AirError).code).toBe("TRAINER_FAILED");
    expect(String(evicted)).toContain("Run wrote a batch with no samples");
  });

  test("with run_dir set, metrics come from its parent (prime-rl's output_dir); no metrics file, no wait", async () => {
    const { ctx, config } = setup({ run_dir: "out/run_a", metrics_wait_ms: 60_000 });
    const trainer = await plugin.create(config, ctx);
    const runDir = join(ctx.configDir, "out", "run_a");
    for (const step of [1, 2]) {
      mkdirSync(join(runDir, "broadcasts", `step_${step}`), { recursive: true });
      writeFileSync(join(runDir, "broadcasts", `step_${step}`, "STABLE"), "");
    }
    expect(await trainer.waitForWeights(0, AbortSignal.timeout(4_000))).toMatchObject({
      version: 1,
      metrics: {},
    });
    writeFileSync(
      join(ctx.configDir, "out", "metrics.jsonl"),
      `${JSON.stringify({ step: 2, "loss/mean": 0.25 })}\n`,
    );
    const weights = await trainer.waitForWeights(1, AbortSignal.timeout(4_000));
    expect(weights?.metrics).toEqual({ "trainer/loss": 0.25 });
  });

  test("rejects a run name prime-rl's multi-run manager would not see", () => {
    expect(() => plugin.configSchema.parse({ run_name: "default" })).toThrow(/run_\*/);
  });
});

describe("metrics and trainer config", () => {
  test("readStepMetrics merges a step's rows and skips other steps and junk", () => {
    const { ctx } = setup();
    const file = join(ctx.runDir, "m.jsonl");
    writeFileSync(
      file,
      [
        JSON.stringify({ step: 1, time: 1, "loss/mean": 9 }),
        "not json",
        JSON.stringify({ step: 2, time: 2, "loss/mean": 0.5, "optim/lr": 0.01, note: "x" }),
        JSON.stringify({ step: 2, "mismatch/abs_logprob_diff/mean": 1e-9, "perf/mfu": 3 }),
      ].join("\n"),
    );
    expect(readStepMetrics(file, 2)).toEqual({
      "trainer/loss": 0.5,
      "trainer/lr": 0.01,
      "trainer/mismatch": 1e-9,
      "trainer/perf/mfu": 3,
    });
    expect(readStepMetrics(file, 3)).toBeNull();
    expect(readStepMetrics(join(ctx.runDir, "missing"), 1)).toBeNull();
  });

  test("primeRlTrainerConfig writes prime-rl's TrainerConfig fields", () => {
    const toml = primeRlTrainerConfig({
      version: "0.8",
      model: "Qwen/Qwen3-0.6B",
      outputDir: "/out/prime-rl",
      lr: 1e-6,
      seqLen: 8192,
      maxSteps: 20,
      loss: { type: "default", kl_tau: 0.01 },
      lora: { rank: 8, alpha: 16 },
    });
    expect(TOML.parse(toml)).toEqual({
      output_dir: "/out/prime-rl",
      max_steps: 20,
      max_concurrent_runs: 1,
      model: { name: "Qwen/Qwen3-0.6B", seq_len: 8192, lora: { rank: 8, alpha: 16 } },
      optim: { type: "adamw", lr: 1e-6 },
      loss: { type: "default", kl_tau: 0.01 },
      rollout_transport: { type: "filesystem" },
      weight_broadcast: { type: "filesystem" },
      file_monitor: { filename: "metrics.jsonl" },
    });
  });
});
