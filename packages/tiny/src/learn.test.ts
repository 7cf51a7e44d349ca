import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, type Sample, type Trainer, type WeightsRef } from "@air/core";
import primeRl from "@air/trainer-prime-rl";
import { startTiny, type TinyProcess } from "./process.ts";
import { TINY_SERVER_SCRIPT, TINY_TRAINER_SCRIPT, writeTinyConfig } from "./scripts.ts";

const COMMANDS = ["ls", "cat data.csv", "python train.py", "validate", "submit"];
const TARGET = 258 + 2; // "python train.py"
const MESSAGES = [{ role: "user", content: "Train the model." }];
const STEPS = 6;
const GROUP = 16;
const LR = 0.01;
const root = mkdtempSync(join(tmpdir(), "air-tiny-learn-"));
// prime-rl 0.9 layout (the plugin's default prime_rl_version): the run dir is the output dir, batches are rank_0.bin.
const runDir = join(root, "prime-rl");
let server: TinyProcess;
let trainerProc: TinyProcess;
let trainer: Trainer;
let base = "";

interface Completion {
  prompt: number[];
  tokens: number[];
  logprobs: number[];
  targetLogprob: number;
}

async function post(path: string, body: unknown): Promise<Response> {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
    signal: AbortSignal.timeout(20_000),
  });
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response;
}

async function generate(seed: number): Promise<Completion> {
  const body = {
    model: "tiny",
    messages: MESSAGES,
    logprobs: true,
    top_logprobs: 6,
    return_token_ids: true,
    seed,
  };
  const r = await (await post("/v1/chat/completions", body)).json();
  const choice = r.choices[0];
  const top: Array<{ token: string; logprob: number }> = choice.logprobs.content[0].top_logprobs;
  const target = top.find((t) => t.token.includes(`\n${COMMANDS[TARGET - 258]}\n`));
  return {
    prompt: r.prompt_token_ids,
    tokens: choice.token_ids,
    logprobs: choice.logprobs.content.map((c: { logprob: number }) => c.logprob),
    targetLogprob: target!.logprob,
  };
}

function toSample(c: Completion, advantage: number, i: number): Sample {
  const mask = [...c.prompt.map(() => 0), ...c.tokens.map(() => 1)];
  return {
    trajectoryId: `t${i}`,
    groupId: "g",
    tokenIds: [...c.prompt, ...c.tokens],
    lossMask: mask,
    logprobs: [...c.prompt.map(() => 0), ...c.logprobs],
    advantages: mask.map((m) => m * advantage),
    spans: [{ turn: 0, start: c.prompt.length, end: mask.length }],
    temperature: 1,
    policyVersion: 0,
    truncatedTokens: 0,
  };
}

beforeAll(async () => {
  const metricsFile = join(runDir, "metrics.jsonl");
  const config = {
    port: 0,
    commands: COMMANDS,
    seed: 11,
    lr: LR,
    run_dir: runDir,
    metrics_file: metricsFile,
    poll_ms: 20,
  };
  writeTinyConfig(join(root, "tiny.json"), config);
  [server, trainerProc] = await Promise.all([
    startTiny(TINY_SERVER_SCRIPT, join(root, "tiny.json")),
    startTiny(TINY_TRAINER_SCRIPT, join(root, "tiny.json")),
  ]);
  base = `http://127.0.0.1:${server.ready.port}`;
  const ctx = {
    log: createLogger("prime-rl", () => {}),
    runDir: root,
    configDir: root,
    runName: "learn",
    seed: 0,
    modelName: "tiny",
    signal: new AbortController().signal,
    emit: () => {},
  };
  trainer = await primeRl.create(
    primeRl.configSchema.parse({ poll_ms: 20, weights_timeout_ms: 60_000 }),
    ctx,
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([server?.stop(), trainerProc?.stop()]);
  rmSync(root, { recursive: true, force: true });
}, 60_000);

describe("tiny trainer + server through prime-rl's transport", () => {
  test("rewarding one command raises its probability; mismatch ≈ 0; STABLE and metrics every step", async () => {
    const targetProbs: number[] = [];
    const mismatches: number[] = [];
    let seed = 0;
    for (let step = 0; step < STEPS; step++) {
      const completions = await Promise.all(Array.from({ length: GROUP }, () => generate(seed++)));
      targetProbs.push(Math.exp(completions[0]!.targetLogprob));
      const rewards = completions.map((c) => (c.tokens[0] === TARGET ? 1 : 0));
      const mean = rewards.reduce((a: number, b) => a + b, 0) / GROUP;
      const samples = completions.map((c, i) => toSample(c, rewards[i]! - mean, i));
      await trainer.submit({ schemaVersion: 1, step, samples, metrics: {} });
      const weights = (await trainer.waitForWeights(step, AbortSignal.timeout(60_000))) as WeightsRef & {
        metrics: Record<string, number>;
      };
      expect(weights.version).toBe(step + 1);
      expect(existsSync(join(runDir, "broadcasts", `step_${step + 1}`, "STABLE"))).toBe(true);
      expect(existsSync(join(weights.path!, "model.pt"))).toBe(true);
      for (const key of ["loss", "grad_norm", "entropy", "lr", "mismatch_kl", "mismatch"]) {
        expect(Number.isFinite(weights.metrics[`trainer/${key}`])).toBe(true);
      }
      expect(weights.metrics["trainer/lr"]).toBe(LR);
      expect(weights.metrics["trainer/entropy"]).toBeGreaterThan(0);
      mismatches.push(weights.metrics["trainer/mismatch"]!);
      await post("/pause", {});
      await post("/update_weights", { weight_dir: weights.path });
      await post("/resume", {});
    }
    const final = await generate(seed++);
    targetProbs.push(Math.exp(final.targetLogprob));
    console.log(`p(target) by step: ${targetProbs.map((p) => p.toFixed(3)).join(" ")}`);
    console.log(
      `mean |trainer - inference logprob| by step: ${mismatches.map((m) => m.toExponential(1)).join(" ")}`,
    );
    expect(targetProbs.at(-1)!).toBeGreaterThan(targetProbs[0]! + 0.3);
    for (const m of mismatches) expect(m).toBeLessThan(1e-9);
  }, 120_000);

  test("SIGTERM stops the trainer cleanly", async () => {
    expect(await trainerProc.stop(30_000)).toBe(0);
  }, 60_000);
});
