import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@air/core/testing";
import { startTiny, type TinyProcess } from "./process.ts";
import { TINY_SERVER_SCRIPT, tinyFiles, writeTinyConfig } from "./scripts.ts";

const dir = mkdtempSync(join(tmpdir(), "air-tiny-router-"));
let server: TinyProcess;

beforeAll(async () => {
  const file = join(dir, "tiny.json");
  writeTinyConfig(file, { port: await freePort(), commands: ["ls", "submit"], seed: 1 });
  server = await startTiny(TINY_SERVER_SCRIPT, file, 60_000);
}, 90_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("router on: the router on server.port forwards the OpenAI routes; admin and LoRA routes live on the engine only", async () => {
  // The kit writes router = "None"; a CLI override turns prime-rl's router on, as
  // `inference @ file --router.type vllm-router` does for prime-rl, and the engine moves to backend_port.
  expect(server.ready.router).toBe(false);
  const file = join(dir, "tiny.json");
  const port = await freePort();
  const engine = await freePort();
  const proc = Bun.spawn(
    [
      "/usr/bin/python3",
      TINY_SERVER_SCRIPT,
      "@",
      tinyFiles(file).inference,
      "--router.type",
      "vllm-router",
      "--server.port",
      String(port),
      "--backend_port",
      String(engine),
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  try {
    const reader = proc.stdout.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(JSON.parse(first.split("\n")[0]!)).toMatchObject({ port, engine_port: engine, router: true });
    const router = `http://127.0.0.1:${port}`;
    const direct = `http://127.0.0.1:${engine}`;
    const post = (base: string, path: string, body: unknown = {}) =>
      fetch(`${base}${path}`, {
        method: "POST",
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
    const models = await (await fetch(`${router}/v1/models`)).json();
    expect(models.data[0].id).toBe("tiny");
    const chat = await post(router, "/v1/chat/completions", { messages: [{ role: "user", content: "hi" }] });
    expect(chat.status).toBe(200);
    for (const path of [
      "/pause",
      "/resume",
      "/update_weights",
      "/v1/load_lora_adapter",
      "/load_lora_adapter",
    ])
      expect({ path, status: (await post(router, path)).status }).toEqual({ path, status: 404 });
    expect((await post(direct, "/pause")).status).toBe(200);
    expect((await post(direct, "/resume")).status).toBe(200);
    // vLLM's and SGLang's LoRA routes both exist on the engine (400 here: no adapter named).
    expect((await post(direct, "/v1/load_lora_adapter")).status).toBe(400);
    expect((await post(direct, "/load_lora_adapter")).status).toBe(400);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}, 90_000);

test('router off (router = "None"): the engine itself listens on server.port with every route', async () => {
  const base = `http://127.0.0.1:${server.ready.port}`;
  expect(server.ready.engine_port).toBe(server.ready.port);
  expect((await fetch(`${base}/pause`, { method: "POST" })).status).toBe(200);
  expect((await fetch(`${base}/resume`, { method: "POST" })).status).toBe(200);
});
