import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTiny, type TinyProcess } from "./process.ts";
import { TINY_SERVER_SCRIPT, writeTinyConfig } from "./scripts.ts";

const COMMANDS = ["ls -la", "python train.py", "validate", "submit"];
const MESSAGES = [
  { role: "system", content: "You are an agent." },
  { role: "user", content: "Train a model, then validate and submit." },
];
const dir = mkdtempSync(join(tmpdir(), "air-tiny-server-"));
let server: TinyProcess;
let base = "";

interface Choice {
  message: { content: string };
  finish_reason: string;
  token_ids: number[];
  logprobs: { content: Array<{ logprob: number; top_logprobs: Array<{ token: string; logprob: number }> }> };
}
interface ChatResponse {
  choices: Choice[];
  prompt_token_ids: number[];
  usage: { prompt_tokens: number; completion_tokens: number };
}

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
    signal: AbortSignal.timeout(20_000),
  });
}

async function chat(extra: Record<string, unknown> = {}): Promise<ChatResponse> {
  const body = { model: "tiny", messages: MESSAGES, logprobs: true, return_token_ids: true, ...extra };
  const response = await post("/v1/chat/completions", body);
  expect(response.status).toBe(200);
  return (await response.json()) as ChatResponse;
}

beforeAll(async () => {
  writeTinyConfig(join(dir, "tiny.json"), { port: 0, commands: COMMANDS, seed: 3 });
  server = await startTiny(TINY_SERVER_SCRIPT, join(dir, "tiny.json"));
  base = `http://127.0.0.1:${server.ready.port}`;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("tiny server routes", () => {
  test("GET /health and /v1/models", async () => {
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect(await (await fetch(`${base}/liveness`)).json()).toEqual({ status: "ok" });
    const models = await (await fetch(`${base}/v1/models`)).json();
    expect(models).toEqual({
      object: "list",
      data: [{ id: "tiny", object: "model", owned_by: "tiny", max_model_len: 32768 }],
    });
    expect((await fetch(`${base}/nope`)).status).toBe(404);
  });

  test("chat completion: MLGym command text, token ids equal to /tokenize, one logprob per token", async () => {
    const tokenized = await (
      await post("/tokenize", { model: "tiny", messages: MESSAGES, add_generation_prompt: true })
    ).json();
    expect(tokenized.count).toBe(tokenized.tokens.length);
    expect(tokenized.max_model_len).toBe(32768);
    for (let i = 0; i < 12; i++) {
      const r = await chat({ temperature: 1, max_tokens: 8 });
      const choice = r.choices[0]!;
      expect(r.prompt_token_ids).toEqual(tokenized.tokens);
      expect(choice.logprobs.content.length).toBe(choice.token_ids.length);
      expect(r.usage).toMatchObject({
        prompt_tokens: tokenized.count,
        completion_tokens: choice.token_ids.length,
      });
      expect(choice.finish_reason).toBe("stop");
      expect(choice.token_ids.at(-1)).toBe(256);
      if (choice.token_ids.length === 2) {
        const command = COMMANDS[choice.token_ids[0]! - 258]!;
        expect(choice.message.content).toBe(
          `DISCUSSION\nNext I run this command.\n\n\`\`\`\n${command}\n\`\`\`\n`,
        );
        expect(choice.logprobs.content[1]!.logprob).toBe(0);
      } else {
        expect(choice.message.content).toBe("");
      }
    }
  });

  test("prefix property: the next turn's prompt extends this turn's prompt + completion ids", async () => {
    for (let seed = 0; seed < 8; seed++) {
      const r = await chat({ seed });
      const history = [
        ...MESSAGES,
        { role: "assistant", content: r.choices[0]!.message.content },
        { role: "user", content: "Output of the command." },
      ];
      const next = await (await post("/tokenize", { messages: history, add_generation_prompt: true })).json();
      const sequence = [...r.prompt_token_ids, ...r.choices[0]!.token_ids];
      expect(next.tokens.slice(0, sequence.length)).toEqual(sequence);
    }
    const edited = [...MESSAGES, { role: "assistant", content: "ls -la" }];
    const bytes = await (await post("/tokenize", { messages: edited, add_generation_prompt: false })).json();
    expect(bytes.tokens.every((t: number) => t < 256)).toBe(true);
  });

  test("max_tokens 1 cuts after the command (finish length); the same seed gives the same completion", async () => {
    const seeded = await Promise.all([chat({ seed: 7 }), chat({ seed: 7 })]);
    expect(seeded[0]!.choices[0]!.token_ids).toEqual(seeded[1]!.choices[0]!.token_ids);
    for (let seed = 0; seed < 20; seed++) {
      const r = await chat({ seed, max_tokens: 1 });
      const choice = r.choices[0]!;
      expect(choice.token_ids.length).toBe(1);
      expect(choice.finish_reason).toBe(choice.token_ids[0] === 256 ? "stop" : "length");
    }
  });

  test("logprobs are exact under the temperature: top_logprobs sum to 1 and match sampling frequencies", async () => {
    for (const temperature of [1, 0.5]) {
      const r = await chat({ temperature, top_logprobs: 5 });
      const top = r.choices[0]!.logprobs.content[0]!.top_logprobs;
      expect(top.length).toBe(5);
      expect(top.reduce((s, t) => s + Math.exp(t.logprob), 0)).toBeCloseTo(1, 10);
      const byToken = new Map(top.map((t) => [t.token, t.logprob]));
      const counts = new Map<number, number>();
      const n = 400;
      for (let seed = 0; seed < n; seed++) {
        const choice = (await chat({ temperature, seed })).choices[0]!;
        const first = choice.token_ids[0]!;
        counts.set(first, (counts.get(first) ?? 0) + 1);
        const piece = first === 256 ? "" : choice.message.content;
        expect(choice.logprobs.content[0]!.logprob).toBeCloseTo(byToken.get(piece)!, 12);
      }
      for (const [token, count] of counts) {
        const piece =
          token === 256
            ? ""
            : `DISCUSSION\nNext I run this command.\n\n\`\`\`\n${COMMANDS[token - 258]}\n\`\`\`\n`;
        const p = Math.exp(byToken.get(piece)!);
        expect(Math.abs(count / n - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / n) + 0.01);
      }
    }
    const cold = (await chat({ temperature: 0.5, top_logprobs: 5 })).choices[0]!.logprobs.content[0]!
      .top_logprobs;
    const warm = (await chat({ temperature: 1, top_logprobs: 5 })).choices[0]!.logprobs.content[0]!
      .top_logprobs;
    expect(cold[0]!.logprob).toBeGreaterThan(warm[0]!.logprob);
  }, 60_000);

  test("/pause holds generation until /resume; bad requests get 400", async () => {
    expect((await post("/pause?mode=keep&clear_cache=false", {})).status).toBe(200);
    let done = false;
    const pending = chat().then((r) => {
      done = true;
      return r;
    });
    await Bun.sleep(300);
    expect(done).toBe(false);
    expect((await post("/resume", {})).status).toBe(200);
    expect((await pending).choices.length).toBe(1);
    expect((await post("/update_weights", {})).status).toBe(400);
    expect((await post("/update_weights", { weight_dir: join(dir, "missing") })).status).toBe(400);
    const bad = await post("/v1/chat/completions", { messages: "x" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: { message: "messages must be a list", type: "BadRequestError", param: null, code: 400 },
    });
    expect((await post("/v1/load_lora_adapter", { lora_name: "a" })).status).toBe(400);
  });

  test("a request naming a model the server does not serve is a 404, in vLLM's words", async () => {
    const missing = await post("/v1/chat/completions", { model: "other", messages: MESSAGES });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: { message: "The model `other` does not exist.", type: "NotFoundError", param: null, code: 404 },
    });
    const { model: _, ...unnamed } = { model: "", messages: MESSAGES };
    expect((await post("/v1/chat/completions", unnamed)).status).toBe(200);
  });

  test("unseeded requests: the same requests give the same completions in any order", async () => {
    writeTinyConfig(join(dir, "order.json"), { port: 0, commands: COMMANDS, seed: 3 });
    const servers = await Promise.all(
      [0, 1].map(() => startTiny(TINY_SERVER_SCRIPT, join(dir, "order.json"))),
    );
    try {
      const prompts = ["first task", "second task"].map((content) => [{ role: "user", content }]);
      const ask = async (port: unknown, messages: unknown) => {
        const r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
          method: "POST",
          body: JSON.stringify({ messages, return_token_ids: true }),
          signal: AbortSignal.timeout(20_000),
        });
        return ((await r.json()) as ChatResponse).choices[0]!.token_ids[0]!;
      };
      const byPrompt = async (port: unknown, order: number[]) => {
        const out: number[][] = [[], []];
        for (const i of order) out[i]!.push(await ask(port, prompts[i]));
        return out;
      };
      const a = await byPrompt(servers[0]!.ready.port, [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
      const b = await byPrompt(servers[1]!.ready.port, [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]);
      expect(b).toEqual(a);
      expect(new Set([...a[0]!, ...a[1]!]).size).toBeGreaterThan(1);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }, 60_000);

  test("SIGTERM stops the server cleanly", async () => {
    writeTinyConfig(join(dir, "other.json"), { port: 0, commands: COMMANDS });
    const other = await startTiny(TINY_SERVER_SCRIPT, join(dir, "other.json"));
    expect(await other.stop(30_000)).toBe(0);
  });

  test("SIGTERM with generations in flight exits 0 (a normal interpreter exit aborted with SIGABRT half the time)", async () => {
    writeTinyConfig(join(dir, "busy.json"), { port: 0, commands: COMMANDS });
    const codes: Array<number | string> = [];
    for (let round = 0; round < 5; round++) {
      const busy = await startTiny(TINY_SERVER_SCRIPT, join(dir, "busy.json"));
      const url = `http://127.0.0.1:${busy.ready.port}/v1/chat/completions`;
      const body = JSON.stringify({ model: "tiny", messages: MESSAGES, max_tokens: 8 });
      let served = 0;
      let stop = false;
      const clients = Array.from({ length: 8 }, async () => {
        while (!stop) {
          const ok = await fetch(url, { method: "POST", body, signal: AbortSignal.timeout(5_000) })
            .then((r) => r.text().then(() => r.ok))
            .catch(() => false);
          if (ok) served++;
        }
      });
      const deadline = Date.now() + 90_000;
      while (served < 16 && Date.now() < deadline) await Bun.sleep(20);
      expect(served).toBeGreaterThanOrEqual(16);
      codes.push(await busy.stop(20_000));
      stop = true;
      await Promise.all(clients);
    }
    expect(codes).toEqual([0, 0, 0, 0, 0]);
  }, 600_000);
});
