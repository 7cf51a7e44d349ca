import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "@air/core";
import { checkTokenData, readCompletion } from "./completion.ts";
import { openaiPolicyConfig } from "./config.ts";
import { detectServer } from "./detect.ts";
import { isContextLengthError, kindFromInfoRoute, kindFromModels, kindRequestFields } from "./kinds.ts";
import { probeServer } from "./probe.ts";
import { promptIdsByKind } from "./prompt-ids.ts";
import { InferenceServer } from "./server.ts";
import { loadWeights } from "./weights.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures");
const fixture = (path: string): unknown => JSON.parse(readFileSync(join(FIXTURES, path), "utf8"));
const message = (path: string) => {
  const body = fixture(path) as { error?: { message: string }; message?: string };
  return body.error?.message ?? body.message ?? "";
};

/** A server answering each route with a fixture file (404 for the rest); records the requests. */
function serve(routes: Record<string, string | { status: number; body: unknown }>) {
  const requests: Array<{ path: string; body: unknown }> = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      const path = new URL(req.url).pathname;
      const text = req.method === "POST" ? await req.text() : "";
      requests.push({ path, body: text ? JSON.parse(text) : undefined });
      const route = routes[path];
      if (route === undefined) return new Response("not found", { status: 404 });
      if (typeof route === "string") return Response.json(fixture(route));
      return Response.json(route.body, { status: route.status });
    },
  });
  servers.push(server);
  const config = openaiPolicyConfig.parse({ base_url: `http://127.0.0.1:${server.port}/v1` });
  return { server: new InferenceServer(config), config, requests };
}

let servers: Array<ReturnType<typeof Bun.serve>> = [];
afterEach(() => {
  for (const s of servers) s.stop(true);
  servers = [];
});
const signal = new AbortController().signal;

describe("server kind from its own routes (fixtures: llama.cpp b11669 answers; vLLM/SGLang shapes from source)", () => {
  test("GET /v1/models names llama.cpp, vLLM and SGLang with their context windows", () => {
    expect(kindFromModels(fixture("llama.cpp/models.json"))).toMatchObject({
      kind: "llama.cpp",
      contextWindow: 512,
    });
    expect(kindFromModels(fixture("vllm/models.json"))).toMatchObject({ kind: "vllm", contextWindow: 32768 });
    expect(kindFromModels(fixture("sglang/models.json"))).toMatchObject({
      kind: "sglang",
      contextWindow: 40960,
    });
    expect(kindFromModels({ data: [{ id: "gpt", owned_by: "openai" }] })).toBeUndefined();
  });

  test("info routes: llama.cpp /props, SGLang /get_model_info", () => {
    expect(kindFromInfoRoute("/props", fixture("llama.cpp/props.json"))).toMatchObject({
      kind: "llama.cpp",
      contextWindow: 512,
    });
    expect(kindFromInfoRoute("/get_model_info", fixture("sglang/get-model-info.json"))?.kind).toBe("sglang");
    expect(kindFromInfoRoute("/version", { version: "0.11.0" })?.kind).toBe("vllm");
  });

  test("detectServer probes the routes; a server with none of them is a hosted API", async () => {
    expect(
      (await detectServer(serve({ "/v1/models": "llama.cpp/models.json" }).server, "auto", "x", signal)).kind,
    ).toBe("llama.cpp");
    const sglang = serve({
      "/v1/models": { status: 200, body: { data: [] } },
      "/get_model_info": "sglang/get-model-info.json",
    });
    expect((await detectServer(sglang.server, "auto", "x", signal)).kind).toBe("sglang");
    const hosted = serve({
      "/v1/models": { status: 200, body: { data: [{ id: "gpt", owned_by: "openai" }] } },
    });
    expect(await detectServer(hosted.server, "auto", "gpt", signal)).toMatchObject({ kind: "openai" });
    const forced = await detectServer(
      serve({ "/v1/models": "llama.cpp/models.json" }).server,
      "vllm",
      "x",
      signal,
    );
    expect(forced.kind).toBe("vllm");
    expect(forced.evidence).toContain("looks like llama.cpp");
  });
});

describe("token data per kind", () => {
  test("llama.cpp: completion ids from each entry's id, logprobs = log(post-sampling prob), prompt ids = usage", () => {
    const answer = fixture("llama.cpp/chat-post-sampling.json") as {
      choices: Array<{ logprobs: { content: Array<{ id: number; prob: number }> } }>;
    };
    const read = readCompletion(answer);
    const entries = answer.choices[0]?.logprobs.content ?? [];
    expect(read.completionTokenIds).toEqual(entries.map((e) => e.id));
    expect(read.logprobs).toEqual(entries.map((e) => Math.log(e.prob)));
    const prompt = (fixture("llama.cpp/tokenize.json") as { tokens: number[] }).tokens;
    expect(checkTokenData(prompt, read.completionTokenIds, read.logprobs, read.usage).problems).toEqual([]);
  });

  test("llama.cpp with top_logprobs 0 returns no logprobs at all: the data is refused", () => {
    const read = readCompletion(fixture("llama.cpp/chat-top-logprobs-0.json"));
    expect(checkTokenData([1, 2], read.completionTokenIds, read.logprobs, read.usage).problems).toEqual([
      "2 prompt token ids but usage.prompt_tokens = 25",
      "no completion token ids",
      "no logprobs",
    ]);
  });

  test("vLLM: top-level prompt_token_ids and choices[0].token_ids; SGLang: both on the choice", () => {
    for (const kind of ["vllm", "sglang"]) {
      const read = readCompletion(fixture(`${kind}/chat.json`));
      expect(read.promptTokenIds).toEqual([151644, 872, 198]);
      expect(read.completionTokenIds).toEqual([4730, 151645]);
      expect(read.logprobs).toEqual([-0.25, -0.5]);
      const data = checkTokenData(read.promptTokenIds, read.completionTokenIds, read.logprobs, read.usage);
      expect(data.problems).toEqual([]);
    }
  });

  test("inconsistent data is refused: empty prompt ids, counts that disagree with usage", () => {
    const usage = { promptTokens: 29, completionTokens: 16 };
    expect(checkTokenData([], [1], [-1], { promptTokens: 29, completionTokens: 1 }).problems).toEqual([
      "empty prompt token ids",
    ]);
    // llama.cpp merges the logprob entries of tokens that end a broken UTF-8 sequence: 12 entries for 16 tokens
    const ids = Array.from({ length: 12 }, (_, i) => i);
    expect(
      checkTokenData(
        Array(29).fill(1),
        ids,
        ids.map(() => -1),
        usage,
      ).problems,
    ).toEqual(["12 completion token ids but usage.completion_tokens = 16"]);
  });

  test("each server's context-length error is recognised", () => {
    for (const path of [
      "llama.cpp/context-error-400.json",
      "vllm/context-error-400.json",
      "sglang/context-error-400.json",
    ]) {
      expect(isContextLengthError(message(path))).toBe(true);
    }
    expect(isContextLengthError("400 exceed_context_size_error")).toBe(true);
    expect(isContextLengthError("invalid model name")).toBe(false);
  });

  test("request fields: llama.cpp asks for 1 top logprob post-sampling with its truncations off", () => {
    const fields = kindRequestFields("llama.cpp", { returnTokenIds: true, vllmExtras: true, version: 3 });
    expect(fields).toMatchObject({ top_logprobs: 1, post_sampling_probs: true, top_k: 0, min_p: 0 });
    expect(fields).not.toHaveProperty("return_token_ids");
    expect(kindRequestFields("sglang", { returnTokenIds: true, vllmExtras: true, version: 3 })).toMatchObject(
      {
        return_prompt_token_ids: true,
        return_token_ids: true,
      },
    );
    expect(kindRequestFields("vllm", { returnTokenIds: true, vllmExtras: true, version: 3 })).toMatchObject({
      return_token_ids: true,
      return_tokens_as_token_ids: true,
      cache_salt: "v3",
    });
    expect(kindRequestFields("openai", { returnTokenIds: true, vllmExtras: true, version: 3 })).toEqual({});
  });
});

describe("tokenize routes per kind", () => {
  const messages = [{ role: "user" as const, content: "hi" }];

  test("llama.cpp: /apply-template, then /tokenize {content, add_special, parse_special}", async () => {
    const s = serve({
      "/apply-template": "llama.cpp/apply-template.json",
      "/tokenize": "llama.cpp/tokenize.json",
    });
    const ids = await promptIdsByKind(s.server, "llama.cpp", "m", messages, signal);
    expect(ids).toHaveLength(25);
    expect(s.requests.map((r) => r.path)).toEqual(["/apply-template", "/tokenize"]);
    expect(s.requests[1]?.body).toEqual({
      content: "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
      add_special: true,
      parse_special: true,
    });
  });

  test("an empty or wrongly shaped tokenizer answer is an error naming the server kind", async () => {
    // llama.cpp answers vLLM's {model, messages} shape with {"tokens": []}
    const s = serve({ "/tokenize": "llama.cpp/tokenize-vllm-shape.json" });
    const error = await promptIdsByKind(s.server, "vllm", "m", messages, signal).catch((e: unknown) => e);
    expect((error as Error).message).toContain(
      "the vllm server's POST /tokenize answer is not a token id list",
    );
    const odd = serve({ "/apply-template": { status: 200, body: { text: "?" } } });
    const error2 = await promptIdsByKind(odd.server, "llama.cpp", "m", messages, signal).catch(
      (e: unknown) => e,
    );
    expect((error2 as Error).message).toContain("the llama.cpp server's POST /apply-template answer");
  });
});

describe("weight routes per kind", () => {
  const env = { modelName: "m", log: createLogger("openai", () => {}), signal };

  test("SGLang: POST /update_weights_from_disk {model_path, weight_version}", async () => {
    const s = serve({ "/update_weights_from_disk": "sglang/update-weights-from-disk.json" });
    await loadWeights(s.server, s.config, { version: 2, path: "/w/2" }, env, "sglang");
    expect(s.requests).toEqual([
      { path: "/update_weights_from_disk", body: { model_path: "/w/2", weight_version: "2" } },
    ]);
    const refused = serve({
      "/update_weights_from_disk": { status: 200, body: { success: false, message: "bad dir" } },
    });
    const error = await loadWeights(
      refused.server,
      refused.config,
      { version: 2, path: "/w/2" },
      env,
      "sglang",
    ).catch((e: unknown) => e);
    expect((error as Error).message).toContain("SGLang refused weights v2 from /w/2: bad dir");
  });

  test("llama.cpp has no full-weight route: a clear error instead of prime-rl's /pause", async () => {
    const s = serve({});
    const error = await loadWeights(s.server, s.config, { version: 1, path: "/w/1" }, env, "llama.cpp").catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toContain("a llama.cpp server has no route to load new full weights");
    expect(s.requests).toEqual([]);
  });
});

describe("rl check probe", () => {
  const base = (url: string | string[], extra: Record<string, unknown> = {}) =>
    openaiPolicyConfig.parse({ base_url: url, retry_backoff_ms: 1, ...extra });

  test("a vLLM-shaped server with token data passes; a hosted API without it fails; a 500 is skip", async () => {
    const good = serve({ "/v1/models": "vllm/models.json", "/v1/chat/completions": "vllm/chat.json" });
    const [ok] = await probeServer(base(good.config.base_url), {});
    expect(ok?.status).toBe("ok");
    expect(ok?.message).toContain('vllm (GET /v1/models owned_by "vllm"): 3 prompt ids, 2 completion ids');
    const hosted = serve({
      "/v1/models": { status: 200, body: { data: [{ id: "gpt", owned_by: "openai" }] } },
      "/v1/chat/completions": { status: 200, body: { choices: [{ message: { content: "ok" } }] } },
    });
    const [fail] = await probeServer(base(hosted.config.base_url), {});
    expect(fail?.status).toBe("fail");
    expect(fail?.message).toContain("a hosted API returns no token ids");
    const broken = serve({
      "/v1/models": "vllm/models.json",
      "/v1/chat/completions": { status: 500, body: {} },
    });
    const [skip] = await probeServer(base(broken.config.base_url), {});
    expect(skip?.status).toBe("skip");
  });

  test("with several servers, one result per server", async () => {
    const good = serve({ "/v1/models": "vllm/models.json", "/v1/chat/completions": "vllm/chat.json" });
    const urls = [String(good.config.base_url), "http://127.0.0.1:9/v1"];
    const results = await probeServer(base(urls), {});
    expect(results.map((r) => [r.name, r.status])).toEqual([
      [`policy server returns training data (${urls[0]})`, "ok"],
      // full weights on a vLLM-protocol server: prime-rl's admin routes are probed too (this one has none)
      [`inference admin routes take prime-rl's payload (${urls[0]})`, "fail"],
      [`policy server returns training data (${urls[1]})`, "skip"],
    ]);
  });

  test("a server that is not up is skip when the launcher starts it", async () => {
    // the launcher's URL is the server root; the policy's has /v1
    const [r] = await probeServer(base("http://127.0.0.1:9/v1"), { inferenceUrl: "http://127.0.0.1:9" });
    expect(r?.status).toBe("skip");
    expect(r?.message).toContain("not up yet");
  });
});

describe("chat completions over plain fetch", () => {
  test("a 2xx answer that is not JSON fails the request with its cause; an error body is kept", async () => {
    let status = 200;
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => new Response(status === 200 ? "{ truncated" : '{"error":{"message":"boom"}}', { status }),
    });
    servers.push(server);
    const config = openaiPolicyConfig.parse({ base_url: `http://127.0.0.1:${server.port}/v1` });
    const inference = new InferenceServer(config);
    const body = {
      model: "m",
      messages: [],
      temperature: 1,
      top_p: 1,
      max_completion_tokens: 1,
      n: 1 as const,
    };
    const malformed = await inference.chat(body, signal).catch((e: unknown) => e);
    expect((malformed as Error).message).toContain("with malformed JSON: { truncated");
    status = 400;
    const rejected = await inference.chat(body, signal).catch((e: unknown) => e);
    expect((rejected as { status: number }).status).toBe(400);
    expect((rejected as Error).message).toContain('answered 400: {"error":{"message":"boom"}}');
  });
});
