import { describe, expect, test } from "bun:test";
import { makeTrajectory, makeTurn } from "../testing/builders.ts";
import type { Group, Trajectory, Turn } from "../types.ts";
import { buildBatch } from "./batch.ts";

function turn(index: number, extra: Partial<Turn> = {}): Turn {
  return makeTurn({
    index,
    completionText: "x",
    promptTokenIds: [1, 2],
    completionTokenIds: [3],
    completionLogprobs: [-0.5],
    action: { text: "x" },
    ...extra,
  });
}

function trajectory(id: string, group: string, reward: number, turns: Turn[]): Trajectory {
  return makeTrajectory({ id, exampleId: group, groupId: `0:${group}`, reward, turns });
}

const advantage = {
  compute: (groups: import("../types.ts").Group[]) => ({
    values: groups.map((g) => g.trajectories.map((t) => t.turns.map(() => t.reward ?? 0))),
    metrics: {},
  }),
};
const strategy = {
  toSamples: (t: Trajectory) => ({
    samples: t.turns.map((x) => ({
      trajectoryId: t.id,
      groupId: t.groupId,
      tokenIds: [...x.promptTokenIds, ...x.completionTokenIds],
      lossMask: [0, 0, 1],
      logprobs: [0, 0, -0.5],
      advantages: [],
      spans: [{ turn: x.index, start: 2, end: 3 }],
      temperature: 1,
      policyVersion: 0,
      truncatedTokens: 0,
    })),
  }),
};

describe("buildBatch", () => {
  test("counts rollouts with a timed-out command, format errors and never-scored rollouts", () => {
    const trajectories = [
      trajectory("a", "g", 1, [
        turn(0, { toolError: "command timed out after 60 s" }),
        turn(1, { scores: { s: 1 } }),
      ]),
      trajectory("b", "g", 0, [turn(0, { parseError: "no command" })]),
    ];
    const { batch } = buildBatch({
      step: 0,
      trajectories,
      failedGroups: "drop",
      filterZeroAdvantages: false,
      advantage,
      strategy,
    });
    expect(batch.metrics["rollout/timeouts"]).toBe(1);
    expect(batch.metrics["rollout/parse_error_frac"]).toBe(0.5);
    expect(batch.metrics["rollout/no_score_frac"]).toBe(0.5);
    expect(batch.metrics["group/zero_variance_frac"]).toBe(0);
  });

  test("fills each sample's masked tokens with its turn's advantage and can drop all-zero samples", () => {
    const trajectories = [trajectory("a", "g", 2, [turn(0)]), trajectory("b", "g", 0, [turn(0)])];
    const { batch } = buildBatch({
      step: 0,
      trajectories,
      failedGroups: "drop",
      filterZeroAdvantages: true,
      advantage,
      strategy,
    });
    expect(batch.samples.map((s) => s.advantages)).toEqual([[0, 0, 2]]);
    expect(batch.metrics["batch/zero_advantage_dropped_frac"]).toBe(0.5);
    // a flat group: every sample dropped, and the warning says so
    const flat = [trajectory("a", "g", 1, [turn(0)]), trajectory("b", "g", 1, [turn(0)])];
    const zero = (groups: Group[]) => ({
      values: groups.map((g) => g.trajectories.map((t) => t.turns.map(() => 0))),
      metrics: {},
    });
    const input = { failedGroups: "drop" as const, filterZeroAdvantages: true, strategy };
    const { warnings } = buildBatch({ ...input, step: 2, trajectories: flat, advantage: { compute: zero } });
    expect(warnings).toContain(
      "step 2: the batch has no samples: all 2 sample(s) had advantage 0 everywhere and were dropped (orchestrator.filter_zero_advantages)",
    );
    // a strategy that dropped every sample as too long
    const long = { toSamples: () => ({ samples: [], metrics: { overlong_dropped: 1 } }) };
    const dropped = buildBatch({ ...input, step: 4, trajectories, advantage, strategy: long });
    expect(dropped.warnings).toContain(
      "step 4: the batch has no samples: 2 sample(s) longer than the strategy's seq_len were dropped",
    );
  });

  test("rollouts that ended before their first turn are counted and named with their stop reason", () => {
    const none = (id: string) => ({ ...trajectory(id, "g", 0, []), stopReason: "context_length" as const });
    const { batch, warnings } = buildBatch({
      step: 3,
      trajectories: [none("a"), none("b")],
      failedGroups: "drop",
      filterZeroAdvantages: false,
      advantage,
      strategy,
    });
    expect(batch.metrics["rollout/no_turn_frac"]).toBe(1);
    const why =
      "2 of 2 rollouts ended before their first turn (context_length 2: the first prompt (system prompt, demonstrations, task) does not fit the model's context window)";
    expect(warnings).toContain(`step 3: the batch has no samples: ${why}`);
    expect(warnings[0]).toEndWith(`${why}.`);
  });
});
