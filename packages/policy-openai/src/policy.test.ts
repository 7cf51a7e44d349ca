import { afterEach, describe, expect, test } from "bun:test";
import { AirError, createLogger, type Message } from "@air/core";
import { openaiPolicyConfig } from "./config.ts";
import { OpenAIPolicy } from "./policy.ts";
import { fakeLogprob, fakeTokens, renderPrompt, SimVllm, type SimVllmOptions } from "./testing/index.ts";

const GOOD = "DISCUSSION\nLet me look around.\n```\nls -a\n```";
const MESSAGES: Message[] = [
  { role: "system", content: "You are an agent." },
  { role: "user", content: "Solve the task." },
];

let servers: SimVllm[] = [];
afterEach(() => {
  for (const s of servers) s.stop();
  servers = [];
});

function start(options: SimVllmOptions = {}): SimVllm {
  const server = new SimVllm({ reply: () => GOOD, ...options });
  servers.push(server);
  return server;
}

function policyFor(
  server: SimVllm,
  overrides: Record<string, unknown> = {},
  signal = new AbortController().signal,
) {
  const config = openaiPolicyConfig.parse({
    base_url: server.baseUrl,
    retry_backoff_ms: 5,
    retry_backoff_max_ms: 20,
    max_tokens: 64,
    ...overrides,
  });
  return new OpenAIPolicy(config, { modelName: "tiny", log: createLogger("openai", () => {}), signal });
}

function generate(policy: OpenAIPolicy, messages = MESSAGES, signal = new AbortController().signal) {
  return policy.generate({ messages, rolloutId: "r0", turnIndex: 0, signal });
}

function chatBodies(server: SimVllm) {
  return server.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => r.body ?? {});
}

/** How long an in-process server may take to see a request on a busy machine (milliseconds idle). */
const WAIT_MS = 30_000;

async function waitFor(condition: () => boolean, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(5);
  }
}

describe("generate", () => {
  test("sends vLLM's fields and returns its token ids, logprobs and the command", async () => {
    const server = start();
    const g = await generate(policyFor(server, { temperature: 0.7, top_p: 0.9 }));
    expect(g.action.command).toBe("ls -a");
    expect(g.promptTokenIds).toEqual(fakeTokens(renderPrompt(MESSAGES)));
    expect(g.completionTokenIds).toEqual(fakeTokens(GOOD));
    expect(g.completionLogprobs).toEqual(fakeTokens(GOOD).map(fakeLogprob));
    expect(g).toMatchObject({ finishReason: "stop", policyVersion: 0, temperature: 0.7 });
    expect(chatBodies(server)[0]).toMatchObject({
      model: "tiny",
      messages: MESSAGES,
      temperature: 0.7,
      top_p: 0.9,
      max_completion_tokens: 64,
      n: 1,
      logprobs: true,
      top_logprobs: 0,
      return_token_ids: true,
      cache_salt: "v0",
    });
    expect(server.paths()).not.toContain("/tokenize");
  });

  test("without return_token_ids, reads completion ids from token_id:N logprobs and prompt ids from /tokenize", async () => {
    const server = start({ tokenIds: false });
    const g = await generate(policyFor(server));
    expect(g.promptTokenIds).toEqual(fakeTokens(renderPrompt(MESSAGES)));
    expect(g.completionTokenIds).toEqual(fakeTokens(GOOD));
    const tokenize = server.requests.find((r) => r.path === "/tokenize");
    expect(tokenize?.body).toEqual({ model: "tiny", messages: MESSAGES, add_generation_prompt: true });
  });

  test("with neither id field, tokenizes the completion text and checks it against the logprob count", async () => {
    const server = start({ tokenIds: false, tokensAsIds: false });
    const g = await generate(policyFor(server));
    expect(g.completionTokenIds).toEqual(fakeTokens(GOOD));
    expect(g.completionLogprobs).toHaveLength(g.completionTokenIds.length);
    expect(server.requests.filter((r) => r.path === "/tokenize")).toHaveLength(2);
  });

  test("without logprobs the generation fails unless require_token_data is off", async () => {
    const server = start({ noLogprobs: true });
    const error = await generate(policyFor(server)).catch((e: unknown) => e);
    expect((error as AirError).code).toBe("POLICY_FAILED");
    expect((error as AirError).message).toContain("no logprobs");
    const g = await generate(policyFor(server, { require_token_data: false }));
    expect(g.completionTokenIds).toEqual(fakeTokens(GOOD));
    expect(g.completionLogprobs).toEqual(fakeTokens(GOOD).map(() => 0));
  });

  test("an evaluation needs no token data: a server without logprobs still answers", async () => {
    const server = start({ noLogprobs: true, tokenIds: false });
    const config = openaiPolicyConfig.parse({ base_url: server.baseUrl, retry_backoff_ms: 5 });
    const log = createLogger("openai", () => {});
    const signal = new AbortController().signal;
    const policy = new OpenAIPolicy(config, { modelName: "tiny", log, signal, evaluationOnly: true });
    const g = await generate(policy);
    expect(g.action.command).toBe("ls -a");
    const training = new OpenAIPolicy(config, { modelName: "tiny", log, signal });
    expect(((await generate(training).catch((e: unknown) => e)) as Error).message).toContain(
      "the vllm server's answer lacks training data",
    );
  });

  test("return_token_ids and the vLLM extras can be switched off", async () => {
    const server = start();
    await generate(policyFor(server, { return_token_ids: false, vllm_extras: false }));
    const body = chatBodies(server)[0] ?? {};
    expect(Object.keys(body).sort()).toEqual(
      [
        "logprobs",
        "max_completion_tokens",
        "messages",
        "min_p",
        "model",
        "n",
        "temperature",
        "top_k",
        "top_logprobs",
        "top_p",
      ].sort(),
    );
  });

  test("a length cut is reported as finish reason length", async () => {
    const server = start();
    const g = await generate(policyFor(server, { max_tokens: 10, max_format_retries: 0 }));
    expect(g.finishReason).toBe("length");
    expect(g.completionTokenIds).toEqual(fakeTokens(GOOD).slice(0, 10));
    expect(g.action.parseError).toBe("no ``` command block found");
  });

  test("parser none makes the whole text the action", async () => {
    const server = start({ reply: () => "The answer is 42." });
    const g = await generate(policyFor(server, { parser: "none" }));
    expect(g.action).toEqual({ text: "The answer is 42." });
  });

  test("a seed gives each rollout and turn its own request seed", async () => {
    const server = start();
    const policy = policyFor(server, { seed: 7 });
    await policy.generate({
      messages: MESSAGES,
      rolloutId: "a",
      turnIndex: 0,
      signal: new AbortController().signal,
    });
    await policy.generate({
      messages: MESSAGES,
      rolloutId: "b",
      turnIndex: 0,
      signal: new AbortController().signal,
    });
    await policy.generate({
      messages: MESSAGES,
      rolloutId: "a",
      turnIndex: 0,
      signal: new AbortController().signal,
    });
    const seeds = chatBodies(server).map((b) => b.seed);
    expect(typeof seeds[0]).toBe("number");
    expect(seeds[0]).not.toBe(seeds[1]);
    expect(seeds[2]).toBe(seeds[0]);
  });

  test("older observations are elided before sending", async () => {
    const server = start();
    const messages: Message[] = [...MESSAGES];
    for (let i = 0; i < 4; i++) {
      messages.push(
        { role: "assistant", content: `step ${i}` },
        { role: "user", content: `out ${i}\nline 2` },
      );
    }
    await generate(policyFor(server, { history: { last_observations: 2 } }), messages);
    const sent = chatBodies(server)[0]?.messages as Message[];
    expect(sent.map((m) => m.content)).toEqual([
      "You are an agent.",
      "Solve the task.",
      "step 0",
      "Old output omitted (2 lines)",
      "step 1",
      "Old output omitted (2 lines)",
      "step 2",
      "out 2\nline 2",
      "step 3",
      "out 3\nline 2",
    ]);
  });
});

test("the env's initial messages (system, demonstrations, task) are never elided unless keep_first says so", async () => {
  const server = start();
  const initial: Message[] = [
    { role: "system", content: "You are an agent." },
    { role: "user", content: "demo 1" },
    { role: "user", content: "demo 2" },
    { role: "user", content: "Solve the task." },
  ];
  const messages: Message[] = [...initial];
  for (let i = 0; i < 3; i++) {
    messages.push({ role: "assistant", content: `step ${i}` }, { role: "user", content: `out ${i}` });
  }
  const request = { messages, rolloutId: "r0", turnIndex: 0, initialMessages: 4 };
  await policyFor(server, { history: { last_observations: 1 } }).generate({
    ...request,
    signal: new AbortController().signal,
  });
  const bodies = () => chatBodies(server).map((b) => (b.messages ?? []) as Message[]);
  const sent = (bodies()[0] ?? []).map((m) => m.content);
  expect(sent.slice(0, 4)).toEqual(initial.map((m) => m.content));
  expect(sent.slice(4)).toEqual([
    "step 0",
    "Old output omitted (1 lines)",
    "step 1",
    "Old output omitted (1 lines)",
    "step 2",
    "out 2",
  ]);
  await policyFor(server, { history: { last_observations: 1, keep_first: 2 } }).generate({
    ...request,
    signal: new AbortController().signal,
  });
  expect(bodies()[1]?.[2]?.content).toBe("Old output omitted (1 lines)");
});

describe("format re-asks", () => {
  test("re-asks with the format error appended and notes how often", async () => {
    const replies = ["I think I should list files.", "Still thinking", GOOD];
    const server = start({ reply: (_, i) => replies[i] ?? GOOD });
    const g = await generate(policyFor(server, { max_format_retries: 2 }));
    expect(g.action.command).toBe("ls -a");
    expect(g.action.notes).toEqual(["Your reply was re-asked 2 time(s) after format errors."]);
    const third = chatBodies(server)[2]?.messages as Message[];
    // as MLGym: the history, the last bad reply and the error; earlier bad replies are not sent again
    expect(third).toHaveLength(MESSAGES.length + 2);
    expect(third.at(-2)).toEqual({ role: "assistant", content: "Still thinking" });
    expect(third.at(-1)?.role).toBe("user");
    expect(third.at(-1)?.content).toContain("no ``` command block found");
    expect(third.at(-1)?.content).toContain("Reply with a DISCUSSION");
    expect(g.promptTokenIds).toEqual(fakeTokens(renderPrompt(third)));
  });

  test("re-asks with the env's format error verbatim and adds no note (MLGym's agent config)", async () => {
    const replies = ["no command", "still none", GOOD];
    const server = start({ reply: (_, i) => replies[i] ?? GOOD });
    const policy = policyFor(server, { max_format_retries: 2 });
    const g = await policy.generate({
      messages: MESSAGES,
      rolloutId: "r0",
      turnIndex: 0,
      signal: new AbortController().signal,
      formatErrorMessage: "Your output was not formatted correctly.",
    });
    expect(g.action.command).toBe("ls -a");
    expect(g.action.notes ?? []).toEqual([]);
    const bodies = chatBodies(server).map((b) => b.messages as Message[]);
    expect(bodies[1]?.at(-1)).toEqual({ role: "user", content: "Your output was not formatted correctly." });
    expect(bodies[2]?.slice(-2)).toEqual([
      { role: "assistant", content: "still none" },
      { role: "user", content: "Your output was not formatted correctly." },
    ]);
    expect(policy.takeStats().window).toMatchObject({ formatRetries: 2, parseErrors: 0 });
  });

  test("the env's parseReply reads the reply instead of the policy's parser", async () => {
    const replies = ["```\nls\n```\n```\npwd\n```", GOOD];
    const server = start({ reply: (_, i) => replies[i] ?? GOOD });
    const seen: string[] = [];
    const g = await policyFor(server, { max_format_retries: 2 }).generate({
      messages: MESSAGES,
      rolloutId: "r0",
      turnIndex: 0,
      signal: new AbortController().signal,
      parseReply: (text) => {
        seen.push(text);
        return text.split("```").length > 3
          ? { text, parseError: "two blocks" }
          : { text, command: "env read" };
      },
    });
    expect(seen).toEqual(replies);
    expect(g.action.command).toBe("env read");
  });

  test("stops re-asking at max_format_retries and returns the parse error", async () => {
    const server = start({ reply: () => "no command here" });
    const policy = policyFor(server, { max_format_retries: 1 });
    const g = await generate(policy);
    expect(g.action.command).toBeUndefined();
    expect(g.action.parseError).toBe("no ``` command block found");
    expect(chatBodies(server)).toHaveLength(2);
    expect(policy.takeStats().window).toMatchObject({ formatRetries: 1, parseErrors: 1, generations: 1 });
  });
});

describe("retries", () => {
  test("retries after 500s and counts them", async () => {
    const server = start();
    server.failNext("/v1/chat/completions", 2, { status: 500 });
    const policy = policyFor(server, { max_retries: 3 });
    const g = await generate(policy);
    expect(g.action.command).toBe("ls -a");
    expect(chatBodies(server)).toHaveLength(3);
    expect(policy.takeStats().window).toMatchObject({ requests: 3, retries: 2, errors: { http_500: 2 } });
  });

  test("gives up after max_retries with POLICY_FAILED", async () => {
    const server = start();
    server.failNext("/v1/chat/completions", 10, { status: 503 });
    const policy = policyFor(server, { max_retries: 2 });
    const error = await generate(policy).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AirError);
    expect((error as AirError).code).toBe("POLICY_FAILED");
    expect(chatBodies(server)).toHaveLength(3);
    expect(policy.takeStats().window).toMatchObject({ failures: 1, errors: { http_503: 3 } });
  });

  test("retries after a request timeout", async () => {
    const server = start();
    server.failNext("/v1/chat/completions", 1, { hangMs: 1500 });
    const policy = policyFor(server, { request_timeout_ms: 150, max_retries: 1 });
    const g = await generate(policy);
    expect(g.action.command).toBe("ls -a");
    expect(policy.takeStats().window.errors).toEqual({ timeout: 1 });
  });

  test("does not retry a 4xx", async () => {
    const server = start();
    const error = await generate(policyFor(server, { model: "missing", max_retries: 3 })).catch(
      (e: unknown) => e,
    );
    expect((error as AirError).code).toBe("POLICY_FAILED");
    expect(chatBodies(server)).toHaveLength(1);
  });

  test("an abort during backoff ends the generation as ABORTED", async () => {
    const server = start();
    server.failNext("/v1/chat/completions", 5, { status: 500 });
    const controller = new AbortController();
    const policy = policyFor(server, {
      retry_backoff_ms: 60_000,
      retry_backoff_max_ms: 60_000,
      max_retries: 3,
    });
    const pending = generate(policy, MESSAGES, controller.signal).catch((e: unknown) => e);
    await waitFor(() => chatBodies(server).length === 1);
    controller.abort();
    expect(((await pending) as AirError).code).toBe("ABORTED");
  });
});

describe("concurrency", () => {
  test("never has more than max_concurrent_requests in flight", async () => {
    const server = start({ gated: true });
    const policy = policyFor(server, { max_concurrent_requests: 3 });
    const all = Promise.all(Array.from({ length: 8 }, () => generate(policy)));
    await waitFor(() => server.inFlight === 3);
    await Bun.sleep(50);
    expect(server.inFlight).toBe(3);
    server.release();
    const generations = await all;
    expect(generations).toHaveLength(8);
    expect(server.peakInFlight).toBe(3);
    expect(policy.peakConcurrency).toBe(3);
  });
});

describe("context window", () => {
  const long: Message[] = [...MESSAGES, { role: "user", content: "x".repeat(600) }];

  test("a prompt that cannot fit stops with context_length without sampling", async () => {
    const server = start({ maxModelLen: 400 });
    const policy = policyFor(server);
    const g = await generate(policy, long);
    expect(g.finishReason).toBe("context_length");
    expect(g.promptTokenIds).toEqual(fakeTokens(renderPrompt(long)));
    expect(g.completionTokenIds).toEqual([]);
    expect(chatBodies(server)).toHaveLength(0);
    expect(server.paths()).toEqual(["/v1/models", "/tokenize"]);
  });

  test("max_tokens is lowered so prompt + completion fit", async () => {
    const server = start({ maxModelLen: 120 });
    const g = await generate(policyFor(server, { max_tokens: 100 }));
    const promptLength = fakeTokens(renderPrompt(MESSAGES)).length;
    expect(chatBodies(server)[0]?.max_completion_tokens).toBe(120 - promptLength);
    expect(g.finishReason).toBe("length");
    expect(g.action.parseError).toBe("a ``` command block was opened but never closed");
  });

  test("a re-ask that cannot fit returns the unparseable reply instead of stopping the episode", async () => {
    const server = start({ maxModelLen: 120, reply: () => "no command" });
    const g = await generate(policyFor(server, { max_tokens: 20, max_format_retries: 3 }));
    expect(g.finishReason).toBe("stop");
    expect(g.completionTokenIds.length).toBeGreaterThan(0);
    expect(g.action.parseError).toContain("no ``` command block found");
  });

  test("max_model_len from the config wins over the server's", async () => {
    const server = start({ maxModelLen: 100_000 });
    const g = await generate(policyFor(server, { max_model_len: 300 }), long);
    expect(g.finishReason).toBe("context_length");
    // /v1/models is read once for the server kind; the window used is the config's 300, not the server's 100k
    expect(server.paths()).toEqual(["/v1/models", "/tokenize"]);
  });

  test("with the previous prompt, a rollout whose text passes the window in bytes is not tokenized each turn", async () => {
    const observation = "o".repeat(120);
    const conversation = (turns: number): Message[] => [
      ...MESSAGES,
      ...Array.from({ length: turns }, (): Message[] => [
        { role: "assistant", content: GOOD },
        { role: "user", content: observation },
      ]).flat(),
    ];
    // One list of message objects, as the loop's conversation is: turn k sends its first 2 + 2k messages.
    const all = conversation(7);
    const finalTokens = fakeTokens(renderPrompt(all)).length;
    const play = async (withPrevious: boolean) => {
      const server = start({ maxModelLen: finalTokens + 64 + 200 });
      const policy = policyFor(server, { history: { last_observations: 0 } });
      let previous: { ids: number[]; cursor: unknown } | undefined;
      for (let k = 0; k <= 7; k++) {
        const g = await policy.generate({
          messages: all.slice(0, 2 + 2 * k),
          rolloutId: "r0",
          turnIndex: k,
          signal: new AbortController().signal,
          ...(withPrevious && previous ? { previousPrompt: previous } : {}),
        });
        expect(g.finishReason).toBe("stop");
        expect(g.promptTokenIds).toEqual(fakeTokens(renderPrompt(all.slice(0, 2 + 2 * k))));
        previous = { ids: g.promptTokenIds, cursor: g.promptCursor };
      }
      return server.paths().filter((p) => p === "/tokenize").length;
    };
    expect(await play(true)).toBe(0);
    // Bytes alone bound the last turn above the window: it was tokenized first.
    expect(await play(false)).toBeGreaterThan(0);
  });

  test("when the window is unknown, the server's context-length 400 becomes context_length", async () => {
    const server = start({ maxModelLen: 300, reportMaxModelLen: false });
    const g = await generate(policyFor(server), long);
    expect(g.finishReason).toBe("context_length");
    expect(chatBodies(server)).toHaveLength(1);
  });
});

describe("loadWeights", () => {
  test("full weights: pause, update_weights, resume, then generations carry the new version", async () => {
    const server = start();
    const policy = policyFor(server);
    await policy.loadWeights({ version: 2, path: "/tmp/run/broadcasts/step_2", kind: "full" });
    const admin = server.requests.filter((r) => r.path !== "/v1/models");
    expect(admin.map((r) => [r.path, r.query, r.body])).toEqual([
      ["/pause", { mode: "keep", clear_cache: "false" }, undefined],
      ["/update_weights", {}, { weight_dir: "/tmp/run/broadcasts/step_2" }],
      ["/resume", {}, undefined],
    ]);
    const g = await generate(policy);
    expect(g.policyVersion).toBe(2);
    expect(policy.version).toBe(2);
    expect(chatBodies(server)[0]?.cache_salt).toBe("v2");
  });

  test("a generation sent before a weight update keeps the version it was sampled with", async () => {
    const server = start({ gated: true });
    const policy = policyFor(server);
    const early = generate(policy);
    await waitFor(() => server.inFlight === 1);
    await policy.loadWeights({ version: 1, path: "/w/1" });
    server.release();
    expect((await early).policyVersion).toBe(0);
    expect((await generate(policy)).policyVersion).toBe(1);
  });

  test("a transient update failure is retried inside one pause/resume", async () => {
    const server = start();
    server.failNext("/update_weights", 1, { status: 503 });
    const policy = policyFor(server);
    await policy.loadWeights({ version: 1, path: "/w/1" });
    expect(server.paths()).toEqual(["/v1/models", "/pause", "/update_weights", "/update_weights", "/resume"]);
    expect(policy.version).toBe(1);
  });

  test("a failed update still resumes the server and keeps the old version", async () => {
    const server = start();
    server.failNext("/update_weights", 1, { status: 400 });
    const policy = policyFor(server);
    const error = await policy.loadWeights({ version: 1, path: "/w/1" }).catch((e: unknown) => e);
    expect((error as AirError).code).toBe("POLICY_FAILED");
    expect(server.paths()).toEqual(["/v1/models", "/pause", "/update_weights", "/resume"]);
    expect(policy.version).toBe(0);
  });

  test("LoRA on stock vLLM: a new name per version without load_inplace, the previous one unloaded", async () => {
    const server = start();
    server.failNext("/v1/load_lora_adapter", 1, { status: 404 });
    const policy = policyFor(server, { weight_update: "lora", lora_name: "air-lora" });
    await policy.loadWeights({ version: 3, path: "/w/lora_3" });
    const g = await generate(policy);
    expect(chatBodies(server)[0]?.model).toBe("air-lora-v3");
    expect(g.policyVersion).toBe(3);
    await policy.loadWeights({ version: 4, path: "/w/lora_4" });
    await waitFor(() => !server.adapters.has("air-lora-v3"));
    await generate(policy);
    expect(chatBodies(server)[1]?.model).toBe("air-lora-v4");
    const admin = server.requests.filter((r) => !["/v1/models", "/v1/chat/completions"].includes(r.path));
    expect(admin.map((r) => [r.path, r.body])).toEqual([
      ["/v1/load_lora_adapter", { lora_name: "air-lora-v3", lora_path: "/w/lora_3" }],
      ["/v1/load_lora_adapter", { lora_name: "air-lora-v3", lora_path: "/w/lora_3" }],
      ["/v1/load_lora_adapter", { lora_name: "air-lora-v4", lora_path: "/w/lora_4" }],
      ["/v1/unload_lora_adapter", { lora_name: "air-lora-v3" }],
    ]);
    expect([...server.adapters]).toEqual(["air-lora-v4"]);
  });

  test("LoRA: the previous adapter is unloaded only after the requests using it are answered", async () => {
    const held = start({ gated: true });
    const policy = policyFor(held, { weight_update: "lora", lora_name: "a" });
    await policy.loadWeights({ version: 1, path: "/w/1" });
    const early = generate(policy);
    await waitFor(() => held.inFlight === 1);
    await policy.loadWeights({ version: 2, path: "/w/2" });
    await Bun.sleep(100);
    expect(held.adapters.has("a-v1")).toBe(true);
    held.release();
    expect((await early).policyVersion).toBe(1);
    await waitFor(() => !held.adapters.has("a-v1"));
    expect([...held.adapters]).toEqual(["a-v2"]);
  });

  test("LoRA on prime-rl's server: one name reloaded through /load_lora_adapter", async () => {
    const server = start();
    const policy = policyFor(server, {
      weight_update: "lora",
      lora_name: "air-lora",
      lora_route: "/load_lora_adapter",
    });
    await policy.loadWeights({ version: 1, path: "/w/1" });
    await policy.loadWeights({ version: 2, path: "/w/2" });
    await generate(policy);
    expect(chatBodies(server)[0]?.model).toBe("air-lora");
    const admin = server.requests.filter((r) => !["/v1/models", "/v1/chat/completions"].includes(r.path));
    expect(admin.map((r) => [r.path, r.body])).toEqual([
      ["/load_lora_adapter", { lora_name: "air-lora", lora_path: "/w/1" }],
      ["/load_lora_adapter", { lora_name: "air-lora", lora_path: "/w/2" }],
    ]);
  });

  test("the config refuses lora without lora_name", () => {
    expect(openaiPolicyConfig.safeParse({ weight_update: "lora" }).success).toBe(false);
  });
});
