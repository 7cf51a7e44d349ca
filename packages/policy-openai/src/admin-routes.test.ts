import { afterAll, describe, expect, test } from "bun:test";
import { createLogger } from "@air/core";
import type { Server } from "bun";
import { openaiPolicyConfig } from "./config.ts";
import { requestModel } from "./kinds.ts";
import { ServerPool } from "./pool.ts";
import { InferenceServer } from "./server.ts";
import { WeightSync } from "./weight-sync.ts";
import { loadWeights, unloadAdapter } from "./weights.ts";

/**
 * A peer that serves only the given POST routes (404 for any other, as a server without them answers) and, like
 * vLLM and SGLang, refuses to load a LoRA name that is already loaded.
 */
function peer(routes: string[]): {
  url: string;
  calls: string[];
  adapters: Set<string>;
  server: Server<undefined>;
} {
  const calls: string[] = [];
  const adapters = new Set<string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      const path = new URL(req.url).pathname;
      calls.push(path);
      if (!routes.includes(path)) return Response.json({ error: `no route ${path}` }, { status: 404 });
      const body = (await req.json().catch(() => ({}))) as { lora_name?: string };
      const name = body.lora_name ?? "";
      if (path.endsWith("/load_lora_adapter")) {
        if (adapters.has(name)) return Response.json({ error: `${name} already loaded` }, { status: 400 });
        adapters.add(name);
      } else if (path.endsWith("/unload_lora_adapter")) adapters.delete(name);
      return Response.json({ success: true });
    },
  });
  peers.push(server);
  return { url: `http://127.0.0.1:${server.port}`, calls, adapters, server };
}

const peers: Server<undefined>[] = [];
afterAll(() => {
  for (const p of peers) p.stop(true);
});

const env = { modelName: "m", log: createLogger("openai", () => {}), signal: new AbortController().signal };
const config = (over: Record<string, unknown>) =>
  openaiPolicyConfig.parse({
    weight_update: "lora",
    lora_name: "air",
    admin_max_attempts: 2,
    retry_backoff_ms: 5,
    retry_backoff_max_ms: 10,
    ...over,
  });

describe("LoRA routes by server kind", () => {
  test("SGLang: /load_lora_adapter and /unload_lora_adapter at the root, a name per version", async () => {
    const sglang = peer(["/load_lora_adapter", "/unload_lora_adapter"]);
    const c = config({ base_url: `${sglang.url}/v1` });
    const server = new InferenceServer(c);
    expect(await loadWeights(server, c, { version: 1, path: "/w/1", kind: "lora" }, env, "sglang")).toBe(
      "air-v1",
    );
    expect(await loadWeights(server, c, { version: 2, path: "/w/2", kind: "lora" }, env, "sglang")).toBe(
      "air-v2",
    );
    await unloadAdapter(server, c, "air-v1", env, "sglang");
    expect(sglang.calls).toEqual(["/load_lora_adapter", "/load_lora_adapter", "/unload_lora_adapter"]);
    expect([...sglang.adapters]).toEqual(["air-v2"]);
  });

  test("vLLM's route against that SGLang peer is a 404 (what air sent before), and the vLLM peer the reverse", async () => {
    const sglang = peer(["/load_lora_adapter"]);
    const c = config({ base_url: `${sglang.url}/v1` });
    const wrong = loadWeights(
      new InferenceServer(c),
      c,
      { version: 1, path: "/w/1", kind: "lora" },
      env,
      "vllm",
    );
    await expect(wrong).rejects.toThrow(/404/);
    const vllm = peer(["/v1/load_lora_adapter", "/v1/unload_lora_adapter"]);
    const v = config({ base_url: `${vllm.url}/v1` });
    const server = new InferenceServer(v);
    expect(await loadWeights(server, v, { version: 3, path: "/w/3", kind: "lora" }, env, "vllm")).toBe(
      "air-v3",
    );
    await unloadAdapter(server, v, "air-v3", env, "vllm");
    expect(vllm.calls).toEqual(["/v1/load_lora_adapter", "/v1/unload_lora_adapter"]);
  });

  test("prime-rl's vLLM server: lora_route = /load_lora_adapter reloads one name in place", async () => {
    const prime = peer(["/load_lora_adapter"]);
    const c = config({ base_url: `${prime.url}/v1`, lora_route: "/load_lora_adapter" });
    const server = new InferenceServer(c);
    expect(await loadWeights(server, c, { version: 1, path: "/w/1", kind: "lora" }, env, "vllm")).toBe("air");
  });
});

describe("which adapter a generation asks for", () => {
  test("SGLang selects it from '<served model>:<adapter>' (a bare name is refused); vLLM by its own name", () => {
    expect(requestModel("sglang", "Qwen/Qwen3-4B", "air-v3")).toBe("Qwen/Qwen3-4B:air-v3");
    expect(requestModel("vllm", "Qwen/Qwen3-4B", "air-v3")).toBe("air-v3");
  });

  test("SGLang: requests name '<base>:<adapter>'; the previous adapter is unloaded by its own name", async () => {
    const sglang = peer(["/load_lora_adapter", "/unload_lora_adapter"]);
    const c = config({ base_url: `${sglang.url}/v1`, server: "sglang" });
    const pool = new ServerPool([new InferenceServer(c)], {
      probeMs: 1000,
      log: env.log,
      signal: env.signal,
      readmit: async () => {},
    });
    const sync = new WeightSync(pool, c, env, "m", async () => "sglang");
    expect(sync.model).toBe("m");
    await sync.load({ version: 1, path: "/w/1", kind: "lora" });
    expect(sync.model).toBe("m:air-v1");
    await sync.load({ version: 2, path: "/w/2", kind: "lora" });
    expect(sync.model).toBe("m:air-v2");
    for (let i = 0; i < 100 && sglang.adapters.has("air-v1"); i++) await Bun.sleep(10);
    expect([...sglang.adapters]).toEqual(["air-v2"]);
  });
});

describe("admin_url: admin calls past a router, to the engine (prime-rl's admin_base_url)", () => {
  test("/pause, /update_weights, /resume go to the engine; chat stays on the router", async () => {
    const router = peer(["/v1/chat/completions"]);
    const engine = peer(["/pause", "/update_weights", "/resume"]);
    const c = openaiPolicyConfig.parse({ base_url: `${router.url}/v1`, admin_url: `${engine.url}/v1` });
    const server = new InferenceServer(c, `${router.url}/v1`, `${engine.url}/v1`);
    await loadWeights(server, c, { version: 1, path: "/w/1", kind: "full" }, env, "vllm");
    expect(engine.calls).toEqual(["/pause", "/update_weights", "/resume"]);
    expect(router.calls).toEqual([]);
  });

  test("one admin URL per base URL, or the config is refused", () => {
    const two = { base_url: ["http://a:8000/v1", "http://b:8000/v1"] };
    expect(openaiPolicyConfig.safeParse({ ...two, admin_url: "http://a:8100/v1" }).success).toBe(false);
    expect(
      openaiPolicyConfig.safeParse({ ...two, admin_url: ["http://a:8100/v1", "http://b:8100/v1"] }).success,
    ).toBe(true);
  });
});
