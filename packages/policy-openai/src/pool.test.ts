import { afterEach, describe, expect, test } from "bun:test";
import { createLogger, type Message } from "@air/core";
import { baseUrls, openaiPolicyConfig } from "./config.ts";
import { OpenAIPolicy } from "./policy.ts";
import { SimVllm } from "./testing/index.ts";

const GOOD = "DISCUSSION\nok\n```\nls\n```";
const MESSAGES: Message[] = [{ role: "user", content: "Solve the task." }];

let servers: SimVllm[] = [];
afterEach(() => {
  for (const s of servers) s.stop();
  servers = [];
});

function start(gated = false): SimVllm {
  const server = new SimVllm({ reply: () => GOOD, gated });
  servers.push(server);
  return server;
}

function policyOver(list: SimVllm[], overrides: Record<string, unknown> = {}) {
  const config = openaiPolicyConfig.parse({
    base_url: list.map((s) => s.baseUrl),
    retry_backoff_ms: 5,
    retry_backoff_max_ms: 20,
    server_probe_ms: 20,
    max_tokens: 64,
    ...overrides,
  });
  return new OpenAIPolicy(config, {
    modelName: "tiny",
    log: createLogger("openai", () => {}),
    signal: new AbortController().signal,
  });
}

const chats = (s: SimVllm) => s.requests.filter((r) => r.path === "/v1/chat/completions").length;
const generate = (policy: OpenAIPolicy, rolloutId: string, turnIndex = 0) =>
  policy.generate({ messages: MESSAGES, rolloutId, turnIndex, signal: new AbortController().signal });

/** How long an in-process server may take to see a request on a busy machine (milliseconds idle). */
const WAIT_MS = 30_000;

async function waitFor(condition: () => boolean, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(5);
  }
}

describe("several inference servers", () => {
  test("base_url takes a list; a single URL is a list of one", () => {
    expect(baseUrls(openaiPolicyConfig.parse({ base_url: ["http://a:1/v1/", "http://b:2/v1"] }))).toEqual([
      "http://a:1/v1",
      "http://b:2/v1",
    ]);
    expect(baseUrls(openaiPolicyConfig.parse({}))).toEqual(["http://127.0.0.1:8000/v1"]);
    expect(openaiPolicyConfig.safeParse({ base_url: [] }).success).toBe(false);
    expect(openaiPolicyConfig.safeParse({ base_url: ["ftp://x"] }).success).toBe(false);
  });

  test("new rollouts go to the least-loaded server; a rollout's later turns stay on its server", async () => {
    const a = start(true);
    const b = start(true);
    const policy = policyOver([a, b]);
    await policy.serverInfo(new AbortController().signal);
    const first = ["r0", "r1", "r2", "r3"].map((id) => generate(policy, id));
    await waitFor(() => a.inFlight + b.inFlight === 4);
    expect([a.inFlight, b.inFlight]).toEqual([2, 2]);
    a.release();
    b.release();
    await Promise.all(first);
    const before = [chats(a), chats(b)];
    const where = (id: string) => policy.pool.pick(id).server.baseUrl;
    const homes = ["r0", "r1", "r2", "r3"].map(where);
    for (let turn = 1; turn <= 3; turn++)
      await Promise.all(["r0", "r1", "r2", "r3"].map((id) => generate(policy, id, turn)));
    expect(["r0", "r1", "r2", "r3"].map(where)).toEqual(homes);
    // a busy home still gets its rollout's turns; a new rollout goes elsewhere
    const home = policy.pool.members.find((m) => m.server.baseUrl === where("r0"));
    if (home === undefined) throw new Error("no home");
    home.inFlight += 10;
    expect(where("r0")).toBe(home.server.baseUrl);
    expect(where("new")).not.toBe(home.server.baseUrl);
    home.inFlight -= 10;
    expect([chats(a) - (before[0] ?? 0), chats(b) - (before[1] ?? 0)]).toEqual([6, 6]);
  });

  test("a weight update goes to every server and returns when all of them have it", async () => {
    const a = start();
    const b = start();
    const policy = policyOver([a, b]);
    await policy.loadWeights({ version: 1, path: "/w/1" });
    for (const s of [a, b]) {
      expect(s.paths().filter((p) => p !== "/v1/models")).toEqual(["/pause", "/update_weights", "/resume"]);
    }
    expect(policy.pool.members.map((m) => m.version)).toEqual([1, 1]);
    expect(policy.version).toBe(1);
  });

  test("a failing server leaves the rotation, is probed, and returns with the latest weights", async () => {
    const a = start();
    const b = start();
    const policy = policyOver([a, b]);
    await generate(policy, "warm");
    b.down = true;
    // every rollout still gets its generation: b's failures are retried on a
    const results = await Promise.all(["x0", "x1", "x2", "x3"].map((id) => generate(policy, id)));
    expect(results.every((g) => g.action.command === "ls")).toBe(true);
    expect(policy.pool.members[1]?.up).toBe(false);
    await policy.loadWeights({ version: 1, path: "/w/1" });
    expect(a.paths()).toContain("/update_weights");
    const probesBefore = b.requests.length;
    // the down server is probed again (every server_probe_ms) and stays down
    await waitFor(() => b.requests.length > probesBefore);
    expect(policy.pool.members[1]?.up).toBe(false);
    b.down = false;
    await waitFor(() => policy.pool.members[1]?.up === true);
    const afterDown = b.requests.filter((r) => r.path !== "/v1/models").map((r) => [r.path, r.body]);
    expect(afterDown.slice(-3)).toEqual([
      ["/pause", undefined],
      ["/update_weights", { weight_dir: "/w/1" }],
      ["/resume", undefined],
    ]);
    expect(policy.pool.members[1]?.version).toBe(1);
    const chatsBefore = chats(b);
    await Promise.all(["y0", "y1", "y2", "y3"].map((id) => generate(policy, id)));
    expect(chats(b)).toBeGreaterThan(chatsBefore);
  });

  test("the last server in rotation is never taken out", async () => {
    const a = start();
    const b = start();
    const policy = policyOver([a, b], { max_retries: 1 });
    a.down = true;
    b.down = true;
    const error = await generate(policy, "z").catch((e: unknown) => e);
    expect(String(error)).toContain("503");
    expect(policy.pool.up.length).toBe(1);
  });
});
