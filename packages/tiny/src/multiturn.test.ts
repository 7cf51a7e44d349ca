import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, type Sample, type Trainer } from "@air/core";
import primeRl from "@air/trainer-prime-rl";
import { startTiny, type TinyProcess } from "./process.ts";
import { TINY_SERVER_SCRIPT, TINY_TRAINER_SCRIPT, writeTinyConfig } from "./scripts.ts";

const COMMANDS = ["ls", "python train.py", "validate", "submit"];
const TRAIN = 258 + 1;
const SUBMIT = 258 + 3;
const START = [{ role: "user", content: "Train a model, then submit it." }];
const root = mkdtempSync(join(tmpdir(), "air-tiny-multiturn-"));
let server: TinyProcess;
let trainerProc: TinyProcess;
let trainer: Trainer;
let base = "";

interface Reply {
  prompt: number[];
  tokens: number[];
  logprobs: number[];
  text: string;
  top: Map<number, number>;
}

async function generate(messages: unknown[], seed: number): Promise<Reply> {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ messages, logprobs: true, top_logprobs: 5, return_token_ids: true, seed }),
    signal: AbortSignal.timeout(20_000),
  });
  const r = await response.json();
  const choice = r.choices[0];
  const entries: Array<{ token: string; logprob: number }> = choice.logprobs.content[0].top_logprobs;
  const top = new Map<number, number>();
  for (const e of entries) {
    const i = COMMANDS.findIndex((c) => e.token.includes(`\n${c}\n`));
    top.set(i < 0 ? 256 : 258 + i, Math.exp(e.logprob));
  }
  return {
    prompt: r.prompt_token_ids,
    tokens: choice.token_ids,
    logprobs: choice.logprobs.content.map((c: { logprob: number }) => c.logprob),
    text: choice.message.content,
    top,
  };
}

const observation = (first: Reply) =>
  first.tokens[0] === TRAIN ? "Training done, model.pt saved." : "Nothing.";

/** One two-turn episode as one interleaved sample: prompt, completion 1, observation (masked out), completion 2. */
async function episode(seed: number): Promise<{ reward: number; sample: Omit<Sample, "advantages"> }> {
  const first = await generate(START, 2 * seed);
  const history = [
    ...START,
    { role: "assistant", content: first.text },
    { role: "user", content: observation(first) },
  ];
  const second = await generate(history, 2 * seed + 1);
  const sequence = [...first.prompt, ...first.tokens];
  expect(second.prompt.slice(0, sequence.length)).toEqual(sequence);
  const context = second.prompt.slice(sequence.length);
  const tokenIds = [...sequence, ...context, ...second.tokens];
  const lossMask = [
    ...first.prompt.map(() => 0),
    ...first.tokens.map(() => 1),
    ...context.map(() => 0),
    ...second.tokens.map(() => 1),
  ];
  const logprobs = [
    ...first.prompt.map(() => 0),
    ...first.logprobs,
    ...context.map(() => 0),
    ...second.logprobs,
  ];
  const reward = first.tokens[0] === TRAIN && second.tokens[0] === SUBMIT ? 1 : 0;
  const spans = [
    { turn: 0, start: first.prompt.length, end: sequence.length },
    { turn: 1, start: second.prompt.length, end: tokenIds.length },
  ];
  return {
    reward,
    sample: {
      trajectoryId: `e${seed}`,
      groupId: "g",
      tokenIds,
      lossMask,
      logprobs,
      spans,
      temperature: 1,
      policyVersion: 0,
      truncatedTokens: 0,
    },
  };
}

/** Probability that a fresh episode succeeds, from the server's own distributions. */
async function successProbability(): Promise<number> {
  const first = await generate(START, 0);
  const trainText = `DISCUSSION\nNext I run this command.\n\n\`\`\`\n${COMMANDS[1]}\n\`\`\`\n`;
  const history = [
    ...START,
    { role: "assistant", content: trainText },
    { role: "user", content: "Training done, model.pt saved." },
  ];
  const second = await generate(history, 0);
  return (first.top.get(TRAIN) ?? 0) * (second.top.get(SUBMIT) ?? 0);
}

beforeAll(async () => {
  // prime-rl 0.9 layout (the plugin's default): the run dir is the output dir, where metrics.jsonl lives too.
  const runDir = join(root, "prime-rl");
  writeTinyConfig(join(root, "tiny.json"), {
    port: 0,
    commands: COMMANDS,
    seed: 2,
    run_dir: runDir,
    metrics_file: join(runDir, "metrics.jsonl"),
    poll_ms: 20,
  });
  [server, trainerProc] = await Promise.all([
    startTiny(TINY_SERVER_SCRIPT, join(root, "tiny.json")),
    startTiny(TINY_TRAINER_SCRIPT, join(root, "tiny.json")),
  ]);
  base = `http://127.0.0.1:${server.ready.port}`;
  const ctx = {
    log: createLogger("prime-rl", () => {}),
    runDir: root,
    configDir: root,
    runName: "multiturn",
    seed: 0,
    modelName: "tiny",
    signal: new AbortController().signal,
    emit: () => {},
  };
  trainer = await primeRl.create(primeRl.configSchema.parse({ poll_ms: 20 }), ctx);
}, 120_000);

afterAll(async () => {
  await Promise.all([server?.stop(), trainerProc?.stop()]);
  rmSync(root, { recursive: true, force: true });
}, 60_000);

test("two-turn episodes as interleaved samples: the right command sequence is learned, mismatch 0", async () => {
  const success = [await successProbability()];
  const meanRewards: number[] = [];
  const mismatches: number[] = [];
  let seed = 0;
  for (let step = 0; step < 8; step++) {
    const episodes = await Promise.all(Array.from({ length: 16 }, () => episode(seed++)));
    const mean = episodes.reduce((s, e) => s + e.reward, 0) / episodes.length;
    meanRewards.push(mean);
    const samples = episodes.map((e) => ({
      ...e.sample,
      advantages: e.sample.lossMask.map((m) => m * (e.reward - mean)),
    }));
    await trainer.submit({ schemaVersion: 1, step, samples, metrics: {} });
    const weights = await trainer.waitForWeights(step, AbortSignal.timeout(60_000));
    mismatches.push(weights?.metrics?.["trainer/mismatch"] ?? Number.NaN);
    for (const route of ["/pause", "/update_weights", "/resume"]) {
      const body = route === "/update_weights" ? { weight_dir: weights?.path } : {};
      const r = await fetch(`${base}${route}`, { method: "POST", body: JSON.stringify(body) });
      expect(r.status).toBe(200);
    }
    success.push(await successProbability());
  }
  console.log(`p(success) by step: ${success.map((p) => p.toFixed(3)).join(" ")}`);
  console.log(`mean reward by step: ${meanRewards.map((r) => r.toFixed(2)).join(" ")}`);
  console.log(`mismatch by step: ${mismatches.map((m) => m.toExponential(1)).join(" ")}`);
  expect(success.at(-1)!).toBeGreaterThan(success[0]! + 0.3);
  for (const m of mismatches) expect(m).toBeLessThan(1e-9);
}, 120_000);
