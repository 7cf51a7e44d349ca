import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, loadConfig, PluginHost } from "@air/core";
import { eventRecorder, testRegistry } from "@air/core/testing";
import { scriptedPolicyPlugin } from "./plugin.ts";
import { scriptedRollout } from "./rollout.ts";

const dir = mkdtempSync(join(tmpdir(), "air-scripted-rollout-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("scriptedRollout: one command per turn through core's rollout, on the host's bus; wrap and maxTurns", async () => {
  const file = join(dir, "run.toml");
  writeFileSync(
    file,
    `logger = []\n[run]\nname = "scripted"\noutput_dir = "${dir}"\n[model]\nname = "m"\n[env]\nplugin = "notebook"\n` +
      `[policy]\nplugin = "scripted"\n[trainer]\nplugin = "memory"\n[advantage]\nplugin = "mean"\n` +
      `[strategy]\nplugin = "per-turn"\n[reward]\nplugin = "last-score"\n`,
  );
  const config = await loadConfig(file, { registry: testRegistry().register(scriptedPolicyPlugin) });
  const host = new PluginHost(config, { sink: () => {} });
  const { hooks, record } = eventRecorder();
  host.bus.onAll(hooks, "test");
  const env = await host.create(config.plugins.env);
  const [example] = await env.examples("eval");
  const base = {
    host,
    env,
    envName: "notebook",
    example: example!,
    groupId: "g",
    orchestrator: config.root.orchestrator,
    log: createLogger("test", () => {}),
  };
  const plain = await scriptedRollout({
    ...base,
    rolloutId: "r0",
    commands: ["write a", "write b", "validate"],
  });
  expect(plain.turns.map((t) => t.observation)).toEqual(["wrote a (step 1)", "wrote b (step 2)", "score 2"]);
  expect(plain.turns.at(-1)?.scores).toEqual({ score: 2 });
  expect(plain).toMatchObject({ id: "r0", groupId: "g", split: "eval", step: 0 });
  // The wrapper answers instead of the script (replay: a stored parse error); maxTurns cuts the script short.
  const wrapped = await scriptedRollout({
    ...base,
    rolloutId: "r1",
    commands: ["write a", "write b", "validate", "submit"],
    maxTurns: 2,
    wrap: (policy) => ({
      ...policy,
      generate: async (request) => {
        const g = await policy.generate(request);
        return request.turnIndex === 1 ? { ...g, action: { text: "ls", command: "ls" } } : g;
      },
    }),
  });
  expect(wrapped.turns.map((t) => t.observation)).toEqual(["wrote a (step 1)", "a"]);
  expect(record.of("rollout:end").map((e) => e.trajectory.id)).toEqual(["r0", "r1"]);
  await host.shutdown({ status: "completed", unsettled: [] });
});
