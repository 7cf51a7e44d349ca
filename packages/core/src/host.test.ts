import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { loadConfig } from "./config/load.ts";
import { EVENT_NAMES, type EventName } from "./events.ts";
import { PluginHost } from "./host.ts";
import { startRun } from "./loop/run.ts";
import { definePlugin, type PluginContext } from "./plugin.ts";
import { PluginRegistry } from "./registry.ts";

const dir = mkdtempSync(join(tmpdir(), "air-host-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Everything the in-memory plugins saw: contexts by name, close order, log lines. */
function journal() {
  return { contexts: new Map<string, PluginContext>(), closed: [] as string[], logs: [] as string[] };
}

function registry(
  j: ReturnType<typeof journal>,
  logger: { hang?: boolean; throwOn?: EventName } = {},
  envStepMs = 0,
) {
  const seen = (name: string, ctx: PluginContext) => j.contexts.set(name, ctx);
  const closer = (name: string) => () => {
    j.closed.push(name);
  };
  return new PluginRegistry()
    .register(
      definePlugin({
        name: "mem-env",
        kind: "env",
        configSchema: z.object({}),
        create: (_c, ctx) => {
          seen("mem-env", ctx);
          return {
            examples: async () => [{ id: "a", task: "t", data: {} }],
            open: async () => ({
              start: async () => [{ role: "user" as const, content: "go" }],
              step: async () => {
                await new Promise((r) => setTimeout(r, envStepMs));
                return { observation: "done", done: true };
              },
              close: async () => {
                j.closed.push("session");
              },
            }),
            close: closer("mem-env"),
          };
        },
      }),
    )
    .register(
      definePlugin({
        name: "mem-policy",
        kind: "policy",
        configSchema: z.object({}),
        create: (_c, ctx) => {
          seen("mem-policy", ctx);
          return {
            version: 0,
            generate: async () => ({
              action: { text: "x", command: "x" },
              promptTokenIds: [1],
              completionTokenIds: [2],
              completionLogprobs: [-0.5],
              finishReason: "stop" as const,
              policyVersion: 0,
              temperature: 1,
            }),
            close: closer("mem-policy"),
          };
        },
      }),
    )
    .register(
      definePlugin({
        name: "mem-reward",
        kind: "reward",
        configSchema: z.object({ scale: z.number().default(1) }),
        create: (config, ctx) => {
          seen("mem-reward", ctx);
          return { score: (t) => ({ turns: t.turns.map(() => config.scale) }), close: closer("mem-reward") };
        },
      }),
    )
    .register(
      definePlugin({
        name: "mem-trainer",
        kind: "trainer",
        configSchema: z.object({}),
        create: () => ({
          submit: async () => {},
          waitForWeights: async () => null,
          close: closer("mem-trainer"),
        }),
      }),
    )
    .register(
      definePlugin({
        name: "mem-advantage",
        kind: "advantage",
        configSchema: z.object({}),
        create: () => ({
          compute: (groups) => ({
            values: groups.map((g) => g.trajectories.map((t) => t.turns.map(() => 0))),
            metrics: {},
          }),
          close: closer("mem-advantage"),
        }),
      }),
    )
    .register(
      definePlugin({
        name: "mem-strategy",
        kind: "strategy",
        configSchema: z.object({}),
        create: () => ({ toSamples: () => ({ samples: [] }), close: closer("mem-strategy") }),
      }),
    )
    .register(
      definePlugin({
        name: "mem-logger",
        kind: "logger",
        configSchema: z.object({}),
        create: () => ({
          hooks: {
            "turn:end": async () => {
              if (logger.throwOn === "turn:end") throw new Error("disk full");
              if (logger.hang) await new Promise(() => {});
            },
            "run:end": () => {
              j.closed.push("run:end seen by mem-logger");
            },
          },
          close: closer("mem-logger"),
        }),
      }),
    );
}

async function config(name: string, extra = "") {
  const file = join(dir, `${name}.toml`);
  writeFileSync(
    file,
    `logger = [{ plugin = "mem-logger" }]
[run]
name = "${name}"
output_dir = "${dir}"
max_steps = 2
[model]
name = "m"
max_model_len = 2048
[orchestrator]
batch_size = 2
rollouts_per_example = 2
max_turns = 4
${extra}
[env]
plugin = "mem-env"
[policy]
plugin = "mem-policy"
[trainer]
plugin = "mem-trainer"
[advantage]
plugin = "mem-advantage"
[strategy]
plugin = "mem-strategy"
[reward]
plugin = "mem-reward"
scale = 2
`,
  );
  return file;
}

describe("PluginHost", () => {
  test("every plugin gets one context: maxTurns, maxModelLen and the launcher's fields", async () => {
    const j = journal();
    const loaded = await loadConfig(await config("ctx"), { registry: registry(j) });
    const host = new PluginHost(loaded, {
      sink: () => {},
      context: { inferenceUrl: "http://h:1", envGpuIds: [3] },
    });
    await host.createLoggers();
    await host.createRunParts();
    for (const name of ["mem-env", "mem-policy", "mem-reward"]) {
      const ctx = j.contexts.get(name)!;
      expect(ctx.maxTurns).toBe(4);
      expect(ctx.maxModelLen).toBe(2048);
      expect(ctx.inferenceUrl).toBe("http://h:1");
      expect(ctx.envGpuIds).toEqual([3]);
      expect(ctx.runName).toBe("ctx");
    }
    await host.shutdown({ status: "completed", unsettled: [] });
  });

  test("a host given only some sections creates what it is handed; creating the run's parts names the missing one", async () => {
    const j = journal();
    const loaded = await loadConfig(await config("partial"), { registry: registry(j) });
    const { trainer: _trainer, ...plugins } = loaded.plugins;
    const host = new PluginHost({ ...loaded, plugins }, { sink: () => {} });
    const env = await host.create(loaded.plugins.env);
    expect(env).toBeDefined();
    expect(j.contexts.has("mem-env")).toBe(true);
    await expect(host.createRunParts()).rejects.toThrow("the plugin host was given no [trainer] section");
    await host.shutdown({ status: "completed", unsettled: [] });
  });

  test("closes in reverse order of creation, one at a time, run:end before the loggers close", async () => {
    const j = journal();
    const summary = await startRun(await loadConfig(await config("order"), { registry: registry(j) }), {
      sink: () => {},
    });
    expect(summary.status).toBe("completed");
    expect(j.closed.filter((c) => c !== "session")).toEqual([
      "mem-reward",
      "mem-strategy",
      "mem-advantage",
      "mem-trainer",
      "mem-policy",
      "mem-env",
      "run:end seen by mem-logger",
      "mem-logger",
    ]);
  });

  test("a throwing handler is reported with its plugin and hook, and the run goes on", async () => {
    const j = journal();
    const lines: string[] = [];
    const summary = await startRun(
      await loadConfig(await config("throws"), { registry: registry(j, { throwOn: "turn:end" }) }),
      { sink: (_l, _s, m) => lines.push(m) },
    );
    expect(summary.status).toBe("completed");
    expect(lines.some((l) => l.includes('[plugin mem-logger] hook "turn:end": disk full'))).toBe(true);
    expect(lines.some((l) => l.includes("[plugin ?]"))).toBe(false);
  });

  test("a hanging handler is cut off after hook_ms and does not stall rollouts", async () => {
    const j = journal();
    const lines: string[] = [];
    const file = await config("hangs", "[orchestrator.timeouts]\nhook_ms = 50");
    const started = Date.now();
    const summary = await startRun(await loadConfig(file, { registry: registry(j, { hang: true }) }), {
      sink: (_l, _s, m) => lines.push(m),
    });
    expect(summary.status).toBe("completed");
    expect(summary.stepsCompleted).toBe(2);
    // 4 rollouts of one turn each: every turn:end waits at most hook_ms, never forever.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(lines.some((l) => /\[plugin mem-logger\] hook "turn:end".*no result after 50 ms/.test(l))).toBe(
      true,
    );
  });

  test("an abort does not wait for a long env step: the rollout stops and its session is closed", async () => {
    const j = journal();
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 200);
    const summary = await startRun(
      await loadConfig(await config("abort"), { registry: registry(j, {}, 60_000) }),
      {
        sink: () => {},
        signal: controller.signal,
      },
    );
    expect(summary.status).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(5_000);
    // max_off_policy_steps = 1: steps 0 and 1 (2 rollouts each) were in flight; every session was closed.
    expect(j.closed.filter((c) => c === "session")).toHaveLength(4);
  });

  test("EVENT_NAMES lists every event once", () => {
    expect(new Set(EVENT_NAMES).size).toBe(EVENT_NAMES.length);
    expect(EVENT_NAMES).toContain("eval:end");
    expect(EVENT_NAMES).toContain("process:state");
  });
});
