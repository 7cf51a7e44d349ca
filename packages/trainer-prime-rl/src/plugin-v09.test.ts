import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "@air/core";
import TOML from "@iarna/toml";
import { cleanFutureSteps } from "./clean.ts";
import { primeRlTrainerSection } from "./launch-sections.ts";
import { decodeMicroBatches } from "./micro-batch.ts";
import plugin from "./plugin.ts";
import { lastPrimeStepUpTo, primeStepOf, readStepMap } from "./steps.ts";
import { testContext, testSample } from "./testing.ts";
import { primeRlTrainerToml } from "./trainer-toml.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function setup(extra: Record<string, unknown> = {}) {
  const ctx = testContext();
  dirs.push(ctx.runDir);
  return { ctx, config: plugin.configSchema.parse({ poll_ms: 10, metrics_wait_ms: 0, ...extra }) };
}

const samples = [
  testSample([1, 2, 3], [300, 301], [-1, -0.5], 1),
  testSample([4], [302, 303, 304], [-2, -1, -0.25], -1),
  testSample([5, 6], [305], [-0.1], 0.5),
];

function stable(runDir: string, step: number) {
  mkdirSync(join(runDir, "broadcasts", `step_${step}`), { recursive: true });
  writeFileSync(join(runDir, "broadcasts", `step_${step}`, "STABLE"), "");
}

describe("prime-rl 0.9 over the filesystem", () => {
  test("is the default; one rank_R.bin per data rank in <output_dir>/rollouts/step_N, no run_* dir, no control file", async () => {
    const { ctx, config } = setup({ data_world_size: 2, seq_len: 8 });
    expect(config.prime_rl_version).toBe("0.9");
    const trainer = await plugin.create(config, ctx);
    const runDir = join(ctx.runDir, "prime-rl");
    await trainer.submit({ schemaVersion: 1, step: 0, samples, metrics: {} });
    const dir = join(runDir, "rollouts", "step_1");
    expect(readdirSync(dir).sort()).toEqual(["rank_0.bin", "rank_1.bin"]);
    expect(existsSync(join(runDir, "control"))).toBe(false);
    const ranks = ["rank_0.bin", "rank_1.bin"].map((f) => decodeMicroBatches(readFileSync(join(dir, f))));
    expect(ranks[0]?.length).toBe(ranks[1]?.length);
    const trained = ranks.flat().reduce((n, m) => n + m.loss_mask.filter(Boolean).length, 0);
    expect(trained).toBe(6);
    for (const m of ranks.flat()) expect(m.input_ids.length).toBeLessThanOrEqual(8);
    stable(runDir, 1);
    const weights = await trainer.waitForWeights(0, AbortSignal.timeout(2_000));
    expect(weights).toMatchObject({ version: 1, path: join(runDir, "broadcasts", "step_1"), kind: "full" });
  });

  test("empty steps take no prime-rl number; the map survives a restart, so a resumed run continues it", async () => {
    const { ctx, config } = setup();
    const runDir = join(ctx.runDir, "prime-rl");
    const first = await plugin.create(config, ctx);
    await first.submit({ schemaVersion: 1, step: 0, samples, metrics: {} });
    await first.submit({ schemaVersion: 1, step: 1, samples: [], metrics: {} });
    await first.submit({ schemaVersion: 1, step: 2, samples, metrics: {} });
    expect(await first.waitForWeights(1, AbortSignal.timeout(1_000))).toBeNull();
    expect(readStepMap(runDir)).toEqual({ "0": 1, "1": null, "2": 2 });
    expect(primeStepOf(runDir, 2)).toBe(2);
    expect(lastPrimeStepUpTo(runDir, 1)).toBe(1);
    // Resume at air step 3 (steps 0..2 done): the next batch is prime-rl step 3, not 4.
    const resumed = await plugin.create(config, ctx);
    await resumed.submit({ schemaVersion: 1, step: 3, samples, metrics: {} });
    expect(readdirSync(join(runDir, "rollouts")).sort()).toEqual(["step_1", "step_2", "step_3"]);
    // Resume at air step 2 (redo it): its old entry is dropped and it takes prime-rl step 2 again.
    rmSync(join(runDir, "rollouts", "step_2"), { recursive: true });
    const redo = await plugin.create(config, ctx);
    await redo.submit({ schemaVersion: 1, step: 2, samples, metrics: {} });
    expect(readStepMap(runDir)).toEqual({ "0": 1, "1": null, "2": 2 });
  });

  test("a broadcast that never gets STABLE: the timeout names the STABLE path and where the batch went", async () => {
    const { ctx, config } = setup({ weights_timeout_ms: 100 });
    const trainer = await plugin.create(config, ctx);
    await trainer.submit({ schemaVersion: 1, step: 0, samples, metrics: {} });
    const runDir = join(ctx.runDir, "prime-rl");
    mkdirSync(join(runDir, "broadcasts", "step_1"), { recursive: true });
    await expect(trainer.waitForWeights(0, AbortSignal.timeout(2_000))).rejects.toThrow(
      `weights of step 1 (${runDir}/broadcasts/step_1/STABLE; its batch was written to ${runDir}/rollouts/step_1/rank_*.bin): not there after 100 ms`,
    );
  });

  test("no .tmp file is left and 0.8 refuses the zmq transport", async () => {
    const { ctx, config } = setup();
    const trainer = await plugin.create(config, ctx);
    await trainer.submit({ schemaVersion: 1, step: 0, samples, metrics: {} });
    expect(readdirSync(join(ctx.runDir, "prime-rl", "rollouts", "step_1"))).toEqual(["rank_0.bin"]);
    expect(() => plugin.configSchema.parse({ prime_rl_version: "0.8", transport: "zmq" })).toThrow(
      /filesystem/,
    );
  });
});

describe("seq_len", () => {
  const long = testSample(
    Array.from({ length: 5000 }, (_, i) => i % 250),
    [300, 301],
    [-1, -1],
    1,
  );

  /** The trainer TOML's `[model] seq_len` as the launcher writes it for these plugin settings. */
  function trainerSeqLen(settings: Record<string, unknown>, maxModelLen?: number): unknown {
    const text = primeRlTrainerToml({
      configDir: "/abs",
      runDir: "/abs/run",
      configFile: "/abs/run.toml",
      trainerProcess: {
        kind: "prime-rl",
        extra_args: [],
        env: {},
        nnodes: 1,
        node_rank: 0,
        master_addr: "127.0.0.1",
        master_port: 29500,
        max_restarts: 0,
      },
      inference: { kind: "external", host: "127.0.0.1", port: 8000, extra_args: [], env: {} },
      section: primeRlTrainerSection.parse({}),
      model: { name: "m", max_model_len: maxModelLen },
      run: { name: "r", seed: 0 },
      gpus: { count: 2, key: "deployment.num_train_gpus" },
      trainerSettings: settings,
      trains: true,
    });
    const model = TOML.parse(text).model;
    return typeof model === "object" && "seq_len" in model ? model.seq_len : undefined;
  }

  for (const [name, extra, maxModelLen] of [
    ["nothing set: 4096", {}, undefined],
    ["[model] max_model_len", {}, 3000],
    ["[trainer] seq_len", { seq_len: 2500 }, 8192],
  ] as const) {
    test(`one seq_len (${name}): the packing bin size is the trainer TOML's [model] seq_len; no micro-batch is longer`, async () => {
      const { ctx, config } = setup({ ...extra, data_world_size: 2 });
      ctx.maxModelLen = maxModelLen;
      const bound = trainerSeqLen(config, maxModelLen);
      expect(bound).toBe("seq_len" in extra ? extra.seq_len : (maxModelLen ?? 4096));
      const trainer = await plugin.create(config, ctx);
      const mid = testSample(
        Array.from({ length: 1400 }, (_, i) => i % 250),
        [300],
        [-1],
        1,
      );
      await trainer.submit({ schemaVersion: 1, step: 0, samples: [long, mid, mid, mid, long], metrics: {} });
      const dir = join(ctx.runDir, "prime-rl", "rollouts", "step_1");
      const lengths = ["rank_0.bin", "rank_1.bin"].flatMap((f) =>
        decodeMicroBatches(readFileSync(join(dir, f))).map((m) => m.input_ids.length),
      );
      expect(Math.max(...lengths)).toBeLessThanOrEqual(Number(bound));
      expect(lengths.some((n) => n === bound)).toBe(true);
    });
  }

  test("[model] max_model_len is the default; a longer sample is truncated as prime-rl does, with a warning", async () => {
    const { ctx, config } = setup();
    const warnings: string[] = [];
    ctx.maxModelLen = 4096;
    ctx.log = createLogger("prime-rl", (level, _source, message) => {
      if (level === "warn") warnings.push(message);
    });
    const trainer = await plugin.create(config, ctx);
    await trainer.submit({ schemaVersion: 1, step: 0, samples: [long], metrics: {} });
    const [m] = decodeMicroBatches(
      readFileSync(join(ctx.runDir, "prime-rl", "rollouts", "step_1", "rank_0.bin")),
    );
    expect(m?.input_ids.length).toBe(4096);
    expect(warnings.join("\n")).toContain("1 sample(s) longer than seq_len 4096 are truncated");
  });
});

describe("cleanFutureSteps (prime-rl's clean_future_steps)", () => {
  function dirty(root: string, nested: boolean) {
    const run = nested ? join(root, "run_default") : root;
    for (const s of [1, 2, 3]) {
      mkdirSync(join(run, "rollouts", `step_${s}`), { recursive: true });
      mkdirSync(join(run, "broadcasts", `step_${s}`), { recursive: true });
    }
    mkdirSync(join(run, "control"), { recursive: true });
    writeFileSync(join(run, "control", "evicted.txt"), "x");
    writeFileSync(join(root, "metrics.jsonl"), "{}\n");
    writeFileSync(join(run, "air-steps.json"), "{}");
    return run;
  }

  test("resume keeps steps up to the resume step and the metrics", () => {
    const { ctx } = setup();
    const run = dirty(ctx.runDir, false);
    cleanFutureSteps({ version: "0.9", outputDir: ctx.runDir, runDir: run, resumeStep: 2 });
    expect(readdirSync(join(run, "rollouts")).sort()).toEqual(["step_1", "step_2"]);
    expect(readdirSync(join(run, "broadcasts")).sort()).toEqual(["step_1", "step_2"]);
    expect(existsSync(join(ctx.runDir, "metrics.jsonl"))).toBe(true);
  });

  test("a fresh start (0.8 layout) removes every step, evicted.txt, metrics.jsonl and air's step map", () => {
    const { ctx } = setup();
    const run = dirty(ctx.runDir, true);
    const removed = cleanFutureSteps({ version: "0.8", outputDir: ctx.runDir, runDir: run, resumeStep: -1 });
    expect(readdirSync(join(run, "rollouts"))).toEqual([]);
    expect(readdirSync(join(run, "broadcasts"))).toEqual([]);
    for (const f of [
      join(run, "control", "evicted.txt"),
      join(ctx.runDir, "metrics.jsonl"),
      join(run, "air-steps.json"),
    ]) {
      expect(existsSync(f)).toBe(false);
      expect(removed).toContain(f);
    }
  });
});
