import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, z } from "@air/core";
import { runToml } from "@air/core/testing";
import { fixtureRegistry } from "@air/logger-sqlite/testing";
import { consoleHooks, consoleLoggerConfig } from "@air/loggers";
import { checkStepLines, parseStepLines } from "@air/loggers/testing";

/**
 * The step lines of real loop runs (kit plugins, the console logger's own formatter, the sqlite store), read back
 * as a user reads them and checked against the store's rows: the seconds and turns/s within a factor of the
 * store's step timestamps and turn rows. The trainer takes 300 ms a step with max_off_policy_steps = 1, so the next
 * step's rollouts are done before its line: the case where a rate over "the time since training ended" divided
 * by almost nothing (turns/s in the thousands, 0.0s).
 */
const dir = mkdtempSync(join(tmpdir(), "air-step-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Policy `lister`: `ls` until the last turn, then `validate`, so every leaf's path scores and inner nodes do not. */
const lister = definePlugin({
  name: "lister",
  kind: "policy",
  configSchema: z.object({ last_turn: z.number().int().default(3) }),
  create: (config) => ({
    version: 0,
    async generate(request) {
      await Bun.sleep(20);
      const text = request.turnIndex >= config.last_turn ? "validate" : "ls";
      const completionTokenIds = [...Array.from(text, (c) => c.charCodeAt(0) % 100), 5];
      return {
        action: { text, command: text },
        promptTokenIds: [1, 2, 3],
        completionTokenIds,
        completionLogprobs: completionTokenIds.map(() => -0.5),
        finishReason: "stop",
        policyVersion: 0,
        temperature: 1,
      };
    },
  }),
});

async function run(name: string, body: string): Promise<{ output: string; dbPath: string }> {
  let output = "";
  const capture = definePlugin({
    name: "console-capture",
    kind: "logger",
    configSchema: consoleLoggerConfig,
    create: () =>
      consoleHooks(
        (line) => {
          output += line;
        },
        { showWarnings: false },
      ),
  });
  const recorded = await runToml(
    `logger = [{ plugin = "console-capture" }, { plugin = "sqlite", flush_ms = 20 }]
[run]
name = "${name}"
max_steps = 4
log_level = "error"
[trainer]
plugin = "memory"
train_ms = 300
[advantage]
plugin = "mean"
[strategy]
plugin = "per-turn"
[reward]
plugin = "last-score"
${body}`,
    { dir, registry: fixtureRegistry(), plugins: [capture, lister] },
  );
  expect(recorded.summary.status).toBe("completed");
  return { output, dbPath: join(recorded.runDir, "air.db") };
}

describe("step lines read back against the store", () => {
  test("tree rollouts (notebook env, 2 roots forking at turns 1 and 2), off-policy: rates over the time spent", async () => {
    const { output, dbPath } = await run(
      "tree-lines",
      `[orchestrator]
batch_size = 8
rollouts_per_example = 8
max_turns = 4
max_off_policy_steps = 1
[orchestrator.tree]
roots = 2
branching_factor = 2
branch_turns = [1, 2]
[env]
plugin = "notebook"
[policy]
plugin = "lister"`,
    );
    const lines = parseStepLines(output);
    expect(lines.map((l) => l.step)).toEqual([0, 1, 2, 3]);
    expect(
      checkStepLines(output, dbPath, { present: ["no-score", "turns/s"], absent: ["rollouts"] }),
    ).toEqual([]);
    for (const l of lines) {
      // A rollout of a tree is a leaf's path: 2 roots × 4 leaves, 14 nodes; each path validates on its last turn,
      // though the inner nodes (turns 0–1, 2) never do themselves.
      expect(l.columns.get("nodes")).toBe("14 ok / 0 failed (8 leaves)");
      expect(l.columns.get("no-score")).toBe("0%");
    }
    // No step took "no time": each after the first waited ~300 ms for the trainer.
    for (const l of lines.slice(1)) expect(l.seconds).toBeGreaterThanOrEqual(0.2);
  }, 60_000);

  test("flat, one turn per rollout, finished before the step's line: no 0.0s, no runaway rate; eval lines", async () => {
    const { output, dbPath } = await run(
      "flat-lines",
      `[orchestrator]
batch_size = 8
rollouts_per_example = 4
max_turns = 1
max_off_policy_steps = 1
eval_every = 2
[env]
plugin = "counting"
[policy]
plugin = "random"
delay_ms = 5`,
    );
    expect(checkStepLines(output, dbPath, { present: ["turns/s"] })).toEqual([]);
    // eval_every = 2: an eval line after steps 1 and 3, its time its own (not in the next step's).
    expect(
      parseStepLines(output)
        .filter((l) => l.eval)
        .map((l) => l.step),
    ).toEqual([1, 3]);
    for (const l of parseStepLines(output)
      .filter((x) => !x.eval)
      .slice(1))
      expect(l.seconds).toBeGreaterThanOrEqual(0.2);
  }, 60_000);
});
