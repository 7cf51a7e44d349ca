import { afterEach, describe, expect, test } from "bun:test";
import {
  createLogger,
  type Environment,
  EventBus,
  type Example,
  type Message,
  PendingWork,
  type PluginContext,
  runRollout,
} from "@air/core";
import plugin from "@air/policy-openai";
import { fakeTokens, renderPrompt, SimVllm, type SimVllmOptions } from "./testing/index.ts";

let servers: SimVllm[] = [];
afterEach(() => {
  for (const s of servers) s.stop();
  servers = [];
});

function start(options: SimVllmOptions): SimVllm {
  const server = new SimVllm(options);
  servers.push(server);
  return server;
}

function context(lines: string[] = []): PluginContext {
  return {
    log: createLogger("openai", (level, _source, message) => lines.push(`${level} ${message}`)),
    runDir: "/tmp/air-policy-openai-test",
    configDir: "/tmp",
    runName: "test",
    seed: 0,
    modelName: "tiny",
    signal: new AbortController().signal,
    emit: () => {},
  };
}

/** An environment that echoes each command; `submit` ends the episode. */
function echoEnv(observation: (command: string) => string): Environment {
  const example: Example = { id: "e0", task: "echo" };
  return {
    examples: async () => [example],
    open: async () => ({
      start: async (): Promise<Message[]> => [
        { role: "system", content: "You run commands." },
        { role: "user", content: "Submit when done." },
      ],
      step: async (action) => ({
        observation: action.parseError ?? observation(action.command ?? ""),
        done: action.command === "submit",
      }),
      close: async () => {},
    }),
  };
}

async function rollout(env: Environment, policy: Awaited<ReturnType<typeof plugin.create>>) {
  const signal = new AbortController().signal;
  return await runRollout(
    {
      env,
      policy,
      bus: new EventBus(),
      pending: new PendingWork(),
      names: { env: "echo", policy: "openai" },
      maxTurns: 5,
      timeouts: { env_open_ms: 5000, env_step_ms: 5000, generate_ms: 10_000 },
      signal,
    },
    { rolloutId: "r0", example: { id: "e0", task: "echo" }, groupId: "0:e0", step: 0 },
  );
}

describe("openai policy plugin", () => {
  test("is the package's default export, with defaults for every field", () => {
    expect(plugin.name).toBe("openai");
    expect(plugin.kind).toBe("policy");
    const config = plugin.configSchema.parse({});
    expect(config).toMatchObject({
      base_url: "http://127.0.0.1:8000/v1",
      parser: "mlgym",
      max_format_retries: 2,
    });
    expect(plugin.configSchema.safeParse({ temprature: 1 }).success).toBe(false);
  });

  test("runs a whole episode in core's rollout loop with token ids on every turn", async () => {
    const replies = ["DISCUSSION\nlook\n```\nls\n```", "```\nsubmit\n```"];
    const server = start({ reply: (_, i) => replies[i] ?? "```\nsubmit\n```" });
    const policy = await plugin.create(plugin.configSchema.parse({ base_url: server.baseUrl }), context());
    const trajectory = await rollout(
      echoEnv((c) => `ran ${c}`),
      policy,
    );
    expect(trajectory.stopReason).toBe("done");
    expect(trajectory.turns.map((t) => t.action.command)).toEqual(["ls", "submit"]);
    for (const turn of trajectory.turns) {
      expect(Array.from(turn.promptTokenIds)).toEqual(fakeTokens(renderPrompt(turn.promptMessages)));
      expect(Array.from(turn.completionTokenIds)).toEqual(fakeTokens(turn.completionText));
      expect(turn.completionLogprobs).toHaveLength(turn.completionTokenIds.length);
    }
  });

  test("a prompt outgrowing max_model_len ends the episode with stopReason context_length", async () => {
    const server = start({ maxModelLen: 600, reply: () => "```\nls\n```" });
    const policy = await plugin.create(
      plugin.configSchema.parse({ base_url: server.baseUrl, max_tokens: 50 }),
      context(),
    );
    const trajectory = await rollout(
      echoEnv(() => "y".repeat(700)),
      policy,
    );
    expect(trajectory.stopReason).toBe("context_length");
    expect(trajectory.turns).toHaveLength(1);
  });

  test("reports its counters as step metrics and logs them at debug (the step line is the progress display)", async () => {
    const server = start({ reply: () => "```\nls\n```" });
    server.failNext("/v1/chat/completions", 1, { status: 502 });
    const lines: string[] = [];
    const policy = await plugin.create(
      plugin.configSchema.parse({ base_url: server.baseUrl, retry_backoff_ms: 1 }),
      context(lines),
    );
    await policy.generate({
      messages: [{ role: "user", content: "go" }],
      rolloutId: "r",
      turnIndex: 0,
      signal: new AbortController().signal,
    });
    const metrics = policy.stepMetrics?.();
    expect(metrics).toMatchObject({ generations: 1, requests: 2, retries: 1, "errors/http_502": 1 });
    expect(lines).toContain("debug generations=1 requests=2 retries=1 errors=http_502:1");
    expect(lines.filter((l) => l.startsWith("info ") && l.includes("generations="))).toEqual([]);
    expect(policy.stepMetrics?.()).toMatchObject({ generations: 0, requests: 0 });
    expect(lines.at(-1)).toBe("debug no requests");
  });
});
