import { describe, expect, test } from "bun:test";
import type TOML from "@iarna/toml";
import { z } from "zod";
import { definePlugin } from "../plugin.ts";
import { renderPrompt, runToml } from "../testing/index.ts";
import type { Trajectory } from "../types.ts";

/** Policy `scribe`: per node and turn, `write <node>t<turn>`, `ls` or `validate`, chosen by a hash. */
const scribePolicy = definePlugin({
  name: "scribe",
  kind: "policy",
  configSchema: z.object({}),
  create: () => ({
    version: 0,
    async generate(request) {
      let h = 7;
      for (const c of `${request.rolloutId}/${request.turnIndex}`)
        h = (h * 31 + (c.codePointAt(0) ?? 0)) >>> 0;
      const text = [`write ${request.rolloutId}t${request.turnIndex}`, "ls", "validate"][h % 3] as string;
      const completionTokenIds = [...Array.from(text, (c) => 10 + (c.codePointAt(0) ?? 0)), 5];
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

function config(
  tree: TOML.JsonMap | undefined,
  orchestrator: TOML.JsonMap = {},
  env: TOML.JsonMap = {},
): TOML.JsonMap {
  return {
    logger: [],
    run: { name: "tree", max_steps: 2 },
    orchestrator: {
      batch_size: 8,
      rollouts_per_example: 8,
      max_turns: 4,
      max_off_policy_steps: 0,
      ...orchestrator,
      ...(tree ? { tree } : {}),
    },
    env: { plugin: "notebook", ...env },
    policy: { plugin: "scribe" },
    reward: { plugin: "last-score" },
    advantage: { plugin: "mean" },
    strategy: { plugin: "per-turn" },
    trainer: { plugin: "memory" },
  };
}

const path = (byId: Map<string, Trajectory>, t: Trajectory): Trajectory[] =>
  t.parent ? [...path(byId, byId.get(t.parent.trajectoryId) as Trajectory), t] : [t];

describe("tree rollouts", () => {
  const tree = { roots: 2, branching_factor: 2, branch_turns: [1, 2] };

  test("roots fork at each branch turn into children that continue at that turn; leaves = rollouts_per_example", async () => {
    const run = await runToml(config(tree), { plugins: [scribePolicy] });
    expect(run.summary.status).toBe("completed");
    const step0 = run.trajectories.filter((t) => t.step === 0);
    expect(step0).toHaveLength(2 + 4 + 8);
    const byId = new Map(step0.map((t) => [t.id, t]));
    const leaves = step0.filter((t) => t.stopReason !== "branched");
    expect(leaves).toHaveLength(8);
    for (const t of step0) {
      const depth = path(byId, t).length - 1;
      expect(t.turns.map((x) => x.index)).toEqual(depth === 2 ? [2, 3] : [depth]);
      if (t.parent) expect(t.parent.turnIndex).toBe(depth);
    }
    expect(run.steps[0]?.metrics["tree/env_steps"]).toBe(2 + 4 + 16);
    expect(run.steps[0]?.metrics["tree/leaves"]).toBe(8);
  });

  test("a fork is isolated: every ls shows exactly the files written on its own path before it", async () => {
    const run = await runToml(config(tree), { plugins: [scribePolicy] });
    const byId = new Map(run.trajectories.map((t) => [t.id, t]));
    let checked = 0;
    for (const t of run.trajectories) {
      const turns = path(byId, t).flatMap((n) => n.turns);
      for (const [i, turn] of turns.entries()) {
        if (turn.completionText !== "ls" || !t.turns.includes(turn)) continue;
        const written = turns
          .slice(0, i)
          .filter((x) => x.completionText.startsWith("write "))
          .map((x) => x.completionText.slice(6))
          .sort();
        expect(turn.observation).toBe(written.join(" ") || "(empty)");
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(5);
  });

  test("advantages sum to zero over every sibling set; each node's turns share its advantage", async () => {
    const run = await runToml(config(tree), { plugins: [scribePolicy] });
    for (const [s, batch] of run.batches.entries()) {
      const nodes = run.trajectories.filter((t) => t.step === s);
      const advantage = new Map<string, number>();
      for (const sample of batch.samples) {
        const values = sample.advantages.filter((_, i) => sample.lossMask[i] === 1);
        expect(new Set(values).size).toBe(1);
        const prior = advantage.get(sample.trajectoryId);
        if (prior !== undefined) expect(values[0]).toBeCloseTo(prior, 12);
        advantage.set(sample.trajectoryId, values[0] as number);
      }
      const sets = new Map<string, number[]>();
      for (const t of nodes) {
        const key = `${t.groupId}/${t.parent?.trajectoryId ?? "root"}`;
        sets.set(key, [...(sets.get(key) ?? []), advantage.get(t.id) ?? 0]);
      }
      expect(sets.size).toBe(1 + 2 + 4);
      const leaves = nodes.filter((t) => t.stopReason !== "branched");
      expect(leaves.some((t) => advantage.get(t.id) !== 0)).toBe(true);
      expect(nodes.every((t) => advantage.has(t.id))).toBe(true);
      for (const values of sets.values())
        expect(Math.abs(values.reduce((a, b) => a + b, 0))).toBeLessThan(1e-12);
      expect(batch.metrics["advantage/std"]).toBeGreaterThan(0);
    }
  });

  test("rewards: a leaf's is its path's, an internal node's the mean of its leaves'", async () => {
    const run = await runToml(config(tree), { plugins: [scribePolicy] });
    const byId = new Map(run.trajectories.map((t) => [t.id, t]));
    for (const t of run.trajectories.filter((x) => x.stopReason !== "branched")) {
      const turns = path(byId, t).flatMap((n) => n.turns);
      const last = turns.findLast((x) => x.scores);
      expect(t.reward).toBe(last?.scores?.score ?? 0);
    }
    for (const t of run.trajectories.filter((x) => x.stopReason === "branched")) {
      const below = run.trajectories.filter(
        (x) => x.stopReason !== "branched" && path(byId, x).some((n) => n.id === t.id),
      );
      expect(below.length).toBeGreaterThan(1);
      expect(t.reward).toBeCloseTo(below.reduce((a, x) => a + (x.reward ?? 0), 0) / below.length, 12);
    }
  });

  test("masks: every model token of every node is trained exactly once; a child's samples carry the shared prefix as context", async () => {
    const run = await runToml(config(tree), { plugins: [scribePolicy] });
    const byId = new Map(run.trajectories.map((t) => [t.id, t]));
    for (const [s, batch] of run.batches.entries()) {
      const nodes = run.trajectories.filter((t) => t.step === s);
      const model = nodes.reduce(
        (a, t) => a + t.turns.reduce((b, x) => b + x.completionTokenIds.length, 0),
        0,
      );
      const trained = batch.samples.reduce((a, x) => a + x.lossMask.reduce((b, m) => b + m, 0), 0);
      expect(trained).toBe(model);
      for (const sample of batch.samples) {
        const node = byId.get(sample.trajectoryId) as Trajectory;
        const span = sample.spans[0] as { turn: number; start: number; end: number };
        const turn = node.turns[span.turn];
        expect(turn).toBeDefined();
        expect(sample.tokenIds.slice(span.start, span.end)).toEqual(
          Array.from(turn?.completionTokenIds ?? []),
        );
        expect(sample.lossMask.slice(0, span.start).every((m) => m === 0)).toBe(true);
        if (!node.parent) continue;
        const prefix = path(byId, node)
          .slice(0, -1)
          .flatMap((n) => n.turns);
        for (const x of prefix) {
          const text = renderPrompt([{ role: "assistant", content: x.completionText }], false).slice(0, -1);
          expect(hasRun(sample.tokenIds.slice(0, span.start), text)).toBe(true);
        }
      }
    }
  });

  test("the leaves never exceed rollouts_per_example; a fork past it is not made", async () => {
    const run = await runToml(
      config(
        { roots: 1, branching_factor: 3, branch_turns: [], branch_every: 1 },
        { rollouts_per_example: 4, batch_size: 4, max_turns: 5 },
      ),
      { plugins: [scribePolicy] },
    );
    for (const step of run.steps) {
      expect(step.metrics["tree/leaves"]).toBe(3);
      expect(step.metrics["tree/branch_points"]).toBe(1);
    }
  });

  test("forks never deadlock on rollout slots: a slot is held only by a playing path", async () => {
    const run = await runToml(config(tree, { max_concurrent_rollouts: 2 }), {
      plugins: [scribePolicy],
      timeoutMs: 10_000,
    });
    expect(run.summary.status).toBe("completed");
    expect(run.summary.peakConcurrentRollouts).toBe(2);
    expect(run.trajectories).toHaveLength(2 * 14);
  });

  test("an env whose sessions cannot fork is refused at start with a clear error", async () => {
    const run = await runToml(config(tree, {}, { can_fork: false }), { plugins: [scribePolicy] });
    expect(run.summary.status).toBe("failed");
    expect(run.summary.error).toContain("[orchestrator.tree] needs an env whose sessions fork");
    expect(run.trajectories).toHaveLength(0);
  });

  test("without [orchestrator.tree] the same run is flat", async () => {
    const run = await runToml(config(undefined), { plugins: [scribePolicy] });
    expect(run.trajectories.filter((t) => t.step === 0)).toHaveLength(8);
    expect(run.trajectories.every((t) => t.parent === undefined && t.turns.length === 4)).toBe(true);
  });
});

function hasRun(haystack: number[], needle: number[]): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}
