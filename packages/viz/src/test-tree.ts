import { join } from "node:path";
import { definePlugin, type RunSummary } from "@air/core";
import { renderPrompt, runToml } from "@air/core/testing";
import { fixtureRegistry } from "@air/logger-sqlite/testing";
import { z } from "zod";

/**
 * Policy `notetaker` for the kit's `notebook` env: on turns before the last it writes a file or lists them (chosen
 * by a hash of the rollout id and turn, so the branches of a tree differ), on the last turn (`max_turns - 1`) it
 * validates, so every leaf ends with a score = the files its path wrote.
 */
export const notetakerPolicy = definePlugin({
  name: "notetaker",
  kind: "policy",
  configSchema: z.object({ last_turn: z.number().int().min(0).default(3) }),
  create: (config) => ({
    version: 0,
    async generate(request) {
      let h = 17;
      for (const c of `${request.rolloutId}#${request.turnIndex}`)
        h = (h * 33 + (c.codePointAt(0) ?? 0)) >>> 0;
      const text =
        request.turnIndex >= config.last_turn
          ? "validate"
          : h % 2 === 0
            ? "ls"
            : `write ${request.rolloutId}-t${request.turnIndex}`;
      const completionTokenIds = [...Array.from(text, (c) => 10 + ((c.codePointAt(0) ?? 0) % 100)), 5];
      return {
        action: { text, command: text },
        promptTokenIds: renderPrompt(request.messages, false),
        completionTokenIds,
        completionLogprobs: completionTokenIds.map(() => -0.5),
        finishReason: "stop",
        policyVersion: 0,
        temperature: 1,
      };
    },
  }),
});

/**
 * A real run of tree rollouts through the loop and the sqlite logger: the `notebook` env, `notetaker` policy,
 * `[orchestrator.tree]` with 2 roots forking in 2 at turns 1 and 2 (14 nodes, 8 leaves per example and step).
 * @example const { dbPath } = await runTreeFixture({ dir: mkdtempSync("/tmp/air-tree-") });
 */
export async function runTreeFixture(options: {
  dir: string;
  maxSteps?: number;
}): Promise<{ summary: RunSummary; dbPath: string }> {
  const toml = `[run]
name = "tree-fixture"
max_steps = ${options.maxSteps ?? 2}
log_level = "error"

[orchestrator]
batch_size = 8
rollouts_per_example = 8
max_turns = 4
max_off_policy_steps = 0

[orchestrator.tree]
roots = 2
branching_factor = 2
branch_turns = [1, 2]

[env]
plugin = "notebook"

[policy]
plugin = "notetaker"

[reward]
plugin = "last-score"

[advantage]
plugin = "mean"

[strategy]
plugin = "per-turn"

[trainer]
plugin = "memory"

[[logger]]
plugin = "sqlite"
flush_ms = 20
`;
  const run = await runToml(toml, {
    dir: options.dir,
    registry: fixtureRegistry(),
    plugins: [notetakerPolicy],
  });
  return { summary: run.summary, dbPath: join(run.runDir, "air.db") };
}
