import { afterAll, describe, expect, test } from "bun:test";
import { OpenAIPolicy, openaiPolicyConfig } from "@air/policy-openai";
import { spawnSimServer } from "../proc.ts";
import { latencySampler, meanLatencyMs } from "./latency.ts";
import { runSimulated } from "./run.ts";
import { renderIds, simTokens, startSimServer } from "./server.ts";

const quiet = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const sim = startSimServer({
  model: "sim",
  latency: { dist: "fixed", median_ms: 1, spread: 0 },
  seed: 1,
  completionTokens: 12,
  maxModelLen: 4096,
});
afterAll(() => sim.stop());

describe("latency", () => {
  test("samplers follow their distribution and repeat per seed", () => {
    const spec = { dist: "lognormal" as const, median_ms: 100, spread: 0.3 };
    const xs = Array.from({ length: 4000 }, latencySampler(spec, 3));
    const again = Array.from({ length: 4000 }, latencySampler(spec, 3));
    expect(again).toEqual(xs);
    const sorted = [...xs].sort((a, b) => a - b);
    expect(sorted[2000]).toBeGreaterThan(95);
    expect(sorted[2000]).toBeLessThan(105);
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(Math.abs(mean - meanLatencyMs(spec))).toBeLessThan(3);
    const uniform = Array.from(
      { length: 500 },
      latencySampler({ dist: "uniform", median_ms: 10, spread: 0.5 }, 1),
    );
    expect(Math.min(...uniform)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...uniform)).toBeLessThanOrEqual(15);
  });
});

describe("simulated server", () => {
  test("the real openai policy reads token ids and logprobs from it", async () => {
    const config = openaiPolicyConfig.parse({ base_url: sim.baseUrl, max_tokens: 12 });
    const policy = new OpenAIPolicy(config, {
      modelName: "sim",
      log: quiet,
      signal: new AbortController().signal,
    });
    const messages = [
      { role: "system" as const, content: "sys" },
      { role: "user" as const, content: "task" },
    ];
    const g = await policy.generate({
      messages,
      rolloutId: "r",
      turnIndex: 0,
      signal: new AbortController().signal,
    });
    expect(g.action.command).toBe("ls -la data");
    expect(g.completionTokenIds.length).toBe(12);
    expect(g.completionLogprobs.length).toBe(12);
    expect(g.promptTokenIds).toEqual(renderIds(messages));
    expect(g.promptTokenIds.slice(0, 3)).toEqual([32_001, ...simTokens("sys"), 32_000]);
    expect(g.finishReason).toBe("stop");
  });

  test("answers vLLM's context-length error and the admin routes", async () => {
    const long = await fetch(`${sim.baseUrl}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({
        model: "sim",
        messages: [{ role: "user", content: "x".repeat(20_000) }],
        max_tokens: 10,
      }),
    });
    expect(long.status).toBe(400);
    expect(await long.text()).toContain("maximum context length");
    const root = sim.baseUrl.replace(/\/v1$/, "");
    for (const route of ["/pause", "/update_weights", "/resume"])
      expect((await fetch(`${root}${route}`, { method: "POST", body: "{}" })).status).toBe(200);
    expect(sim.stats.adminRequests).toBeGreaterThanOrEqual(3);
  });
});

describe("simulated run", () => {
  test("the real loop completes with the sim env, reward and trainer, loading weights each step", async () => {
    const before = sim.stats.adminRequests;
    let updates = 0;
    let turns = 0;
    const summary = await runSimulated({
      baseUrl: sim.baseUrl,
      inFlight: 4,
      batchSize: 8,
      rolloutsPerExample: 4,
      steps: 2,
      maxTurns: 2,
      maxOffPolicySteps: 1,
      envLatency: { dist: "fixed", median_ms: 1, spread: 0 },
      trainerStepMs: 5,
      completionTokens: 12,
      seed: 1,
      hooks: { "weights:updated": () => void updates++, "turn:end": () => void turns++ },
    });
    expect(summary.status).toBe("completed");
    expect(summary.stepsCompleted).toBe(2);
    expect(summary.peakConcurrentRollouts).toBe(4);
    expect(updates).toBe(2);
    expect(turns).toBe(2 * 8 * 2);
    expect(sim.stats.adminRequests - before).toBe(2 * 3);
  });

  test("the server also runs as its own process and stops", async () => {
    const child = await spawnSimServer({
      model: "sim",
      latency: { dist: "fixed", median_ms: 0, spread: 0 },
      seed: 1,
      completionTokens: 4,
      maxModelLen: 4096,
    });
    try {
      expect((await child.stats()).chatRequests).toBe(0);
    } finally {
      await child.stop();
    }
    expect(() => process.kill(child.pid, 0)).toThrow();
  });
});
