import { afterAll, expect, test } from "bun:test";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeMicroBatches, packSamples, type TrainingSampleWire } from "@air/trainer-prime-rl";
import { startTiny, type TinyProcess } from "./process.ts";
import {
  TINY_PY_DIR,
  TINY_PYTHON,
  TINY_SERVER_SCRIPT,
  TINY_TRAINER_SCRIPT,
  tinyFiles,
  writeTinyConfig,
} from "./scripts.ts";

// With [model.lora] the trainer trains a LoRA adapter on the frozen base and broadcasts only the adapter, in
// prime-rl's layout; the server's LoRA routes load it and serve base + B·A·alpha/r under the adapter's name.
const root = mkdtempSync(join(tmpdir(), "air-tiny-lora-"));
const started: TinyProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
  rmSync(root, { recursive: true, force: true });
}, 30_000);

const COMMANDS = ["ls", "validate", "submit"];

/** A LoRA setup (r = `rank`, alpha 8, lr 0.05) training `run`; `extra` is appended to its trainer TOML. */
function loraSetup(name: string, run: string, maxSteps: number, extra = "[ckpt]\n", rank = 4): string {
  const f = join(root, `${name}.json`);
  const lora = { rank, alpha: 8 };
  writeTinyConfig(f, {
    port: 0,
    commands: COMMANDS,
    seed: 4,
    run_dir: run,
    poll_ms: 20,
    max_steps: maxSteps,
    lr: 0.05,
    lora,
  });
  appendFileSync(tinyFiles(f).trainer, extra);
  return f;
}

const runDir = join(root, "run");
const file = loraSetup("tiny", runDir, 2); // with a checkpoint after the last step

interface Chat {
  prompt_token_ids: number[];
  choices: Array<{
    token_ids: number[];
    logprobs: {
      content: Array<{ logprob: number; top_logprobs: Array<{ token: string; logprob: number }> }>;
    };
  }>;
}

async function ask(port: unknown, model: string): Promise<Chat> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({
      model,
      messages: [{ role: "user", content: "what next?" }],
      temperature: 1,
      seed: 7,
      logprobs: true,
      top_logprobs: 4,
      return_token_ids: true,
    }),
    signal: AbortSignal.timeout(20_000),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Chat;
}

const load = (port: unknown, route: string, body: Record<string, unknown>) =>
  fetch(`http://127.0.0.1:${port}${route}`, {
    method: "POST",
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });

/** The first token's distribution (EOS and every command), as the server reports it. */
const dist = (c: Chat) =>
  c.choices[0]?.logprobs.content[0]?.top_logprobs.map((t) => [t.token, t.logprob]).sort();

/** A batch of one rewarded completion, with the server's logprobs (so the trainer's mismatch compares the two). */
function writeStep(step: number, chat: Chat): void {
  writeStepIn(runDir, step, chat);
}

function writeStepIn(runDir: string, step: number, chat: Chat): void {
  const completion = chat.choices[0]?.token_ids ?? [];
  const lps = chat.choices[0]?.logprobs.content.map((e) => e.logprob) ?? [];
  const n = chat.prompt_token_ids.length;
  const sample: TrainingSampleWire = {
    token_ids: [...chat.prompt_token_ids, ...completion],
    mask: [...Array(n).fill(false), ...completion.map(() => true)],
    logprobs: [...Array(n).fill(0), ...lps],
    temperatures: Array(n + completion.length).fill(1),
    env_name: "t",
    ref_logprobs: null,
    rl_weights: null,
    ce_weights: null,
    ref_kl_weights: null,
    advantages: [...Array(n).fill(0), ...completion.map(() => 1)],
  };
  const dir = join(runDir, "rollouts", `step_${step}`);
  mkdirSync(dir, { recursive: true });
  const grid = packSamples([sample], { seqLen: 128, dataWorldSize: 1 });
  writeFileSync(join(dir, "rank_0.bin"), encodeMicroBatches(grid[0] ?? []));
}

async function waitFor(path: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (!existsSync(path)) {
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${path}`);
    await Bun.sleep(50);
  }
}

/** safetensors' header, read here independently of the Python writer: tensor name -> dtype and shape. */
function safetensorsHeader(path: string): Record<string, { dtype: string; shape: number[] }> {
  const buf = readFileSync(path);
  const size = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + size).toString("utf8"));
  delete header.__metadata__;
  return header;
}

test("LoRA: the trainer changes only the adapter and broadcasts it alone; the server serves it beside the untouched base", async () => {
  const trainer = await startTiny(TINY_TRAINER_SCRIPT, file, 60_000);
  started.push(trainer);
  const server = await startTiny(TINY_SERVER_SCRIPT, file, 60_000);
  started.push(server);
  const port = server.ready.port;
  const broadcast = (step: number) => join(runDir, "broadcasts", `step_${step}`);

  // step_0: a fresh adapter (B = 0), so the adapter's model is the base exactly.
  expect(readdirSync(broadcast(0)).sort()).toEqual([
    "STABLE",
    "adapter_config.json",
    "adapter_model.safetensors",
  ]);
  const base0 = await ask(port, "tiny");
  expect(
    (await load(port, "/v1/load_lora_adapter", { lora_name: "air-lora", lora_path: broadcast(0) })).status,
  ).toBe(200);
  const fresh = await ask(port, "air-lora");
  expect(dist(fresh)).toEqual(dist(base0));
  writeStep(1, fresh);

  // step_1: prime-rl's /load_lora_adapter reloads the one name in place; vLLM's refuses a loaded name.
  await waitFor(join(broadcast(1), "STABLE"));
  expect(
    (await load(port, "/v1/load_lora_adapter", { lora_name: "air-lora", lora_path: broadcast(1) })).status,
  ).toBe(400);
  expect(
    (await load(port, "/load_lora_adapter", { lora_name: "air-lora", lora_path: broadcast(1) })).status,
  ).toBe(200);
  const trained = await ask(port, "air-lora");
  expect(dist(trained)).not.toEqual(dist(base0));
  expect(dist(await ask(port, "tiny"))).toEqual(dist(base0)); // the base model is untouched
  writeStep(2, trained);
  expect(await Promise.race([trainer.proc.exited, Bun.sleep(60_000).then(() => "hung")])).toBe(0);

  // The trainer computed exactly what the server served (adapter v1 on the base): no logprob mismatch.
  const rows = readFileSync(join(runDir, "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(rows.map((r) => r.step)).toEqual([1, 2]);
  for (const r of rows) expect(r["mismatch/abs_logprob_diff/max"]).toBeLessThan(1e-12);

  // The broadcast is prime-rl's adapter layout: adapter_config.json and the adapter tensors only.
  expect(readdirSync(broadcast(2)).sort()).toEqual([
    "STABLE",
    "adapter_config.json",
    "adapter_model.safetensors",
  ]);
  const config = JSON.parse(readFileSync(join(broadcast(2), "adapter_config.json"), "utf8"));
  expect(config).toMatchObject({
    peft_type: "LORA",
    r: 4,
    lora_alpha: 8,
    target_modules: ["down_proj", "o_proj", "up_proj"],
  });
  expect(config.base_model_name_or_path).toBe(tinyFiles(file).modelDir);
  const header = safetensorsHeader(join(broadcast(2), "adapter_model.safetensors"));
  expect(Object.keys(header).sort()).toEqual(
    ["down_proj", "o_proj", "up_proj"].flatMap((m) => [
      `blocks.0.${m}.lora_A.weight`,
      `blocks.0.${m}.lora_B.weight`,
    ]),
  );
  expect(header["blocks.0.o_proj.lora_A.weight"]).toEqual({
    dtype: "F64",
    shape: [4, 32],
    data_offsets: expect.any(Array),
  } as never);
  expect(header["blocks.0.up_proj.lora_B.weight"]?.shape).toEqual([128, 4]);

  // The final checkpoint holds base + adapter: every base tensor is bit-identical to the initial weights.
  const check = Bun.spawnSync(
    [
      TINY_PYTHON,
      "-c",
      `import json, sys, torch
from air_tiny import model as tm
init = tm.build_model(tm.load_model_config(sys.argv[1])).state_dict()
state = torch.load(sys.argv[2])["model"]
base = {k.replace(".base_layer.", "."): v for k, v in state.items() if ".lora_" not in k}
print(json.dumps({"same_keys": sorted(base) == sorted(init), "changed": [k for k in init if not torch.equal(init[k], base[k])],
  "adapter_changed": sorted(k for k, v in state.items() if ".lora_B." in k and bool(v.abs().sum() > 0))}))`,
      tinyFiles(file).modelDir,
      join(runDir, "checkpoints", "step_2", "trainer", "__0_0.distcp"),
    ],
    { env: { ...process.env, PYTHONPATH: TINY_PY_DIR }, stderr: "pipe" },
  );
  expect(check.exitCode, check.stderr.toString()).toBe(0);
  const result = JSON.parse(check.stdout.toString());
  expect(result).toEqual({
    same_keys: true,
    changed: [],
    adapter_changed: ["down_proj", "o_proj", "up_proj"].map((m) => `blocks.0.${m}.lora_B.weight`),
  });

  // Unloading leaves the base; a missing adapter is a 404 (the policy retries: files not visible yet).
  expect((await load(port, "/v1/unload_lora_adapter", { lora_name: "air-lora" })).status).toBe(200);
  expect(
    (await load(port, "/v1/load_lora_adapter", { lora_name: "x", lora_path: join(root, "none") })).status,
  ).toBe(404);
}, 240_000);

test("the server refuses an adapter above max_lora_rank, and LoRA loads when LoRA is not enabled", async () => {
  const big = loraSetup("big", join(root, "big-run"), 1, "", 8);
  const trainer = await startTiny(TINY_TRAINER_SCRIPT, big, 60_000); // writes step_0's adapter (r = 8)
  started.push(trainer);
  await trainer.stop();
  const adapter = join(root, "big-run", "broadcasts", "step_0");
  const server = await startTiny(TINY_SERVER_SCRIPT, file, 60_000); // max_lora_rank 4
  started.push(server);
  const res = await load(server.ready.port, "/v1/load_lora_adapter", { lora_name: "a", lora_path: adapter });
  expect(res.status).toBe(400);
  expect(JSON.stringify(await res.json())).toContain("greater than max_lora_rank 4");
  const plain = join(root, "plain.json");
  writeTinyConfig(plain, { port: 0, commands: COMMANDS, seed: 4 });
  const off = await startTiny(TINY_SERVER_SCRIPT, plain, 60_000);
  started.push(off);
  const refused = await load(off.ready.port, "/v1/load_lora_adapter", { lora_name: "a", lora_path: adapter });
  expect(refused.status).toBe(400);
  expect(JSON.stringify(await refused.json())).toContain("LoRA is not enabled");
}, 180_000);

test("LoRA checkpoints hold the adapter: [resume] step = 1 broadcasts the very adapter step 1 trained", async () => {
  const resumeRun = join(root, "resume-run");
  const first = await startTiny(TINY_TRAINER_SCRIPT, loraSetup("first", resumeRun, 1), 60_000);
  started.push(first);
  const content = [-1.1, 0].map((logprob) => ({ logprob, top_logprobs: [] }));
  const chat = { prompt_token_ids: [1, 2], choices: [{ token_ids: [258, 256], logprobs: { content } }] };
  writeStepIn(resumeRun, 1, chat);
  expect(await Promise.race([first.proc.exited, Bun.sleep(60_000).then(() => "hung")])).toBe(0);
  const adapter = join(resumeRun, "broadcasts", "step_1", "adapter_model.safetensors");
  const trained = readFileSync(adapter);
  rmSync(join(resumeRun, "broadcasts"), { recursive: true });
  const second = await startTiny(
    TINY_TRAINER_SCRIPT,
    loraSetup("second", resumeRun, 2, "[resume]\nstep = 1\n"),
    60_000,
  );
  started.push(second);
  expect(second.ready).toMatchObject({ event: "ready", step: 2 });
  expect(readFileSync(adapter).equals(trained)).toBe(true);
  await second.stop();
}, 180_000);
