import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import grpo from "@air/advantage-grpo";
import { definePlugin, type PluginContext, PluginRegistry } from "@air/core";
import { scriptedPolicy } from "@air/env-dataset";
import { branching } from "@air/strategies";
import trainerNone from "@air/trainer-none";
import { z } from "zod";
import { runEvaluation } from "./evaluate.ts";

const dir = mkdtempSync(join(tmpdir(), "air-eval-ctx-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The bug this guards: eval built its own plugin context without maxTurns, so an MLGym agent was told
// "Remaining Steps: 9" with max_turns = 4. Eval now creates plugins through core's PluginHost.
test("eval gives plugins the same context as rl: maxTurns and maxModelLen from the config", async () => {
  const seen: PluginContext[] = [];
  const env = definePlugin({
    name: "ctx-env",
    kind: "env",
    configSchema: z.object({}),
    create: (_c, ctx) => {
      seen.push(ctx);
      return {
        examples: async () => [{ id: "a", task: "t", data: {} }],
        open: async () => ({
          start: async () => [{ role: "user" as const, content: `Remaining Steps: ${ctx.maxTurns}` }],
          step: async () => ({ observation: "ok", done: true }),
          close: async () => {},
        }),
      };
    },
  });
  const reward = definePlugin({
    name: "one",
    kind: "reward",
    configSchema: z.object({}),
    create: () => ({ score: (t) => ({ turns: t.turns.map(() => 1) }) }),
  });
  const registry = new PluginRegistry()
    .register(trainerNone)
    .register(grpo)
    .register(branching)
    .register(env)
    .register(reward)
    .register(scriptedPolicy("scripted", () => "submit"));
  const file = join(dir, "eval.toml");
  writeFileSync(
    file,
    `logger = []
[run]
name = "ctx"
output_dir = "${dir}"
[model]
name = "m"
max_model_len = 1234
[orchestrator]
rollouts_per_example = 1
batch_size = 1
max_turns = 4
[env]
plugin = "ctx-env"
[policy]
plugin = "scripted"
[reward]
plugin = "one"
`,
  );
  const report = await runEvaluation(file, [], { registry, sink: () => {}, print: () => {} });
  expect(report.overall.samples).toBe(1);
  expect(seen).toHaveLength(1);
  expect(seen[0]!.maxTurns).toBe(4);
  expect(seen[0]!.maxModelLen).toBe(1234);
});
