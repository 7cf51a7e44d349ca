import { describe, expect, test } from "bun:test";
import type { Trajectory } from "@air/core";
import { guesserPolicy, notebookEnv, runToml } from "@air/core/testing";
import { branching } from "./branching.ts";
import { interleaved } from "./interleaved.ts";

/** Tree rollouts (core's `[orchestrator.tree]`) through the real strategies: each node's turns trained once. */
async function treeRun(strategy: "interleaved" | "branching") {
  return runToml(
    {
      logger: [],
      run: { name: "tree", max_steps: 2 },
      orchestrator: {
        batch_size: 8,
        rollouts_per_example: 8,
        max_turns: 4,
        max_off_policy_steps: 0,
        tree: { roots: 2, branching_factor: 2, branch_turns: [1, 2] },
      },
      env: { plugin: "notebook" },
      policy: { plugin: "guesser" },
      reward: { plugin: "last-score" },
      advantage: { plugin: "mean" },
      strategy: { plugin: strategy },
      trainer: { plugin: "memory" },
    },
    { plugins: [notebookEnv, guesserPolicy, interleaved, branching] },
  );
}

const pathTurns = (byId: Map<string, Trajectory>, t: Trajectory): Trajectory["turns"] =>
  t.parent ? [...pathTurns(byId, byId.get(t.parent.trajectoryId) as Trajectory), ...t.turns] : t.turns;

describe("strategies on tree rollouts", () => {
  for (const name of ["interleaved", "branching"] as const) {
    test(`${name}: every model token is trained once, shared turns ride along masked out, samples stay well-formed`, async () => {
      const run = await treeRun(name);
      expect(run.summary.status).toBe("completed");
      const byId = new Map(run.trajectories.map((t) => [t.id, t]));
      for (const [s, batch] of run.batches.entries()) {
        const nodes = run.trajectories.filter((t) => t.step === s && t.turns.length > 0);
        const model = nodes.reduce(
          (a, t) => a + t.turns.reduce((b, x) => b + x.completionTokenIds.length, 0),
          0,
        );
        const trained = batch.samples.reduce((a, x) => a + x.lossMask.reduce((b, m) => b + m, 0), 0);
        expect(trained).toBe(model);
        if (name === "interleaved") expect(batch.samples).toHaveLength(nodes.length);
        for (const sample of batch.samples) {
          const n = sample.tokenIds.length;
          expect([sample.lossMask.length, sample.logprobs.length, sample.advantages.length]).toEqual([
            n,
            n,
            n,
          ]);
          for (let i = 0; i < n; i++) if (!sample.lossMask[i]) expect(sample.advantages[i]).toBe(0);
          const node = byId.get(sample.trajectoryId) as Trajectory;
          if (!node.parent) continue;
          // The first trained token comes after the whole shared history: every completion of the ancestors is in
          // the sample's masked-out prefix, in order.
          const first = sample.lossMask.indexOf(1);
          const prefix = sample.tokenIds.slice(0, first);
          const shared = pathTurns(byId, node).slice(0, -node.turns.length);
          let at = 0;
          for (const turn of shared) {
            const found = indexOf(prefix, turn.completionTokenIds, at);
            expect(found).toBeGreaterThanOrEqual(0);
            at = found + turn.completionTokenIds.length;
          }
        }
      }
    });
  }
});

function indexOf(haystack: ArrayLike<number>, needle: ArrayLike<number>, from: number): number {
  outer: for (let i = from; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
