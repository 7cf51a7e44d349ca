import { z } from "zod";
import { sleep } from "../../pending.ts";
import { definePlugin } from "../../plugin.ts";
import type { Group, Trajectory } from "../../types.ts";
import { turnSample } from "../builders.ts";

/**
 * Reward `last-score`: the last `score` a trajectory reported (0 if none), credited to the turn that reported it.
 * @example registry.register(lastScoreReward); // [reward] plugin = "last-score"
 */
export const lastScoreReward = definePlugin({
  name: "last-score",
  kind: "reward",
  configSchema: z.object({}),
  create: () => ({
    score: (t: Trajectory) => {
      const turns = t.turns.map(() => 0);
      const last = t.turns.findLastIndex((x) => x.scores);
      if (last >= 0) turns[last] = t.turns[last]?.scores?.score ?? 0;
      return { turns };
    },
  }),
});

/**
 * Advantage `mean`: trajectory reward minus its group's mean, the same value on every turn.
 * @example registry.register(meanAdvantage); // [advantage] plugin = "mean"
 */
export const meanAdvantage = definePlugin({
  name: "mean",
  kind: "advantage",
  configSchema: z.object({}),
  create: () => ({
    compute: (groups: Group[]) => {
      const values = groups.map((g) => {
        const mean = g.trajectories.reduce((a, t) => a + (t.reward ?? 0), 0) / g.trajectories.length;
        return g.trajectories.map((t) => t.turns.map(() => (t.reward ?? 0) - mean));
      });
      const flat = values.flat(2);
      const nonzero = flat.filter((v) => v !== 0).length;
      return { values, metrics: { nonzero_frac: flat.length ? nonzero / flat.length : 0 } };
    },
  }),
});

/**
 * Strategy `per-turn`: one sample per turn, prompt tokens masked out, completion tokens trained.
 * @example registry.register(perTurnStrategy); // [strategy] plugin = "per-turn"
 */
export const perTurnStrategy = definePlugin({
  name: "per-turn",
  kind: "strategy",
  configSchema: z.object({}),
  create: () => ({
    toSamples: (t: Trajectory) => ({ samples: t.turns.map((turn, i) => turnSample(t, turn, i)) }),
  }),
});

/**
 * Trainer `memory`: accepts every batch, "trains" for `train_ms` and returns version step + 1 with
 * trainer-style metrics (loss 1/(step+1), grad_norm, lr, entropy); reports its process as running, then exited.
 * The batches are the `batch` of each `step:end` event (see `runToml`).
 * @example registry.register(memoryTrainer); // [trainer] plugin = "memory"  train_ms = 5
 */
export const memoryTrainer = definePlugin({
  name: "memory",
  kind: "trainer",
  configSchema: z.object({
    train_ms: z.number().int().min(0).default(0).describe("how long each step's training takes"),
  }),
  create: (config, ctx) => {
    ctx.emit("process:state", { role: "trainer", pid: process.pid, state: "running" });
    const done = new Map<number, Promise<void>>();
    return {
      submit: async (batch) => {
        done.set(batch.step, sleep(config.train_ms));
      },
      waitForWeights: async (step) => {
        await done.get(step);
        done.delete(step);
        return {
          version: step + 1,
          metrics: { loss: 1 / (step + 1), grad_norm: 0.5, lr: 1e-5, entropy: 2 - step * 0.1 },
        };
      },
      close: () => ctx.emit("process:state", { role: "trainer", pid: process.pid, state: "exited" }),
    };
  },
});
