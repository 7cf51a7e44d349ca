import { definePlugin, type Example, type Message, sleep, type WeightsRef } from "@air/core";
import { z } from "zod";
import { seededRandom } from "../stats.ts";
import { latencySampler, latencySpec } from "./latency.ts";

const OBSERVATION = "total 12\ndrwxr-xr-x 2 agent agent 4096 .\n-rw-r--r-- 1 agent agent 5120 train.csv\n";

const LOG_LINE = "epoch 3 | step 120/400 | loss 0.4127 | val_loss 0.4419 | lr 2.0e-04 | 1.92 it/s\n";

/** An observation of `chars` characters: a listing, then training-log lines (what a long command prints). */
function observationOf(chars: number | undefined): string {
  if (chars === undefined) return OBSERVATION;
  const body = OBSERVATION + LOG_LINE.repeat(Math.ceil(chars / LOG_LINE.length));
  return body.slice(0, chars);
}

const utf8 = new TextEncoder();
const decoder = new TextDecoder();

/**
 * `template` as a string of its own, as a real env's output is (decoded from the process's bytes): not the one
 * shared string, so what the orchestrator holds per turn is measured as a real run holds it.
 */
function freshCopy(template: Uint8Array): string {
  return decoder.decode(template);
}

/**
 * An environment whose steps take a latency drawn from `step_latency` and never end the episode (rollouts
 * run `max_turns` turns). Stands in for MLGym containers when the orchestrator itself is measured.
 * @example
 * [env]
 * plugin = "sim-env"
 * step_latency = { dist = "lognormal", median_ms = 100, spread = 0.3 }
 */
export const simEnv = definePlugin({
  name: "sim-env",
  kind: "env",
  description: "simulated environment: configured step latency, fixed observation",
  configSchema: z
    .object({
      step_latency: latencySpec.describe("time one env step takes"),
      examples: z.number().int().positive().default(64).describe("distinct train examples"),
      task_chars: z.number().int().positive().default(1500).describe("length of the task prompt"),
      observation_chars: z
        .number()
        .int()
        .positive()
        .optional()
        .describe("length of each observation (default: a short `ls -l` listing)"),
    })
    .strict(),
  create(config, ctx) {
    const next = latencySampler(config.step_latency, ctx.seed + 1);
    const task = "Improve the baseline model's score on the held-out split. ".repeat(
      Math.ceil(config.task_chars / 59),
    );
    const observation = utf8.encode(observationOf(config.observation_chars));
    const examples: Example[] = Array.from({ length: config.examples }, (_, i) => ({
      id: `ex${i}`,
      task: "sim",
    }));
    return {
      examples: async () => examples,
      open: async () => ({
        start: async (): Promise<Message[]> => [
          { role: "system", content: "You are an ML research agent working in a shell." },
          { role: "user", content: task.slice(0, config.task_chars) },
        ],
        step: async () => {
          await sleep(next(), ctx.signal);
          return { observation: freshCopy(observation), done: false, kind: "command" };
        },
        close: async () => {},
      }),
    };
  },
});

/**
 * A reward drawn uniformly in [0, 1) per trajectory (seeded), so groups have variance and advantages are real.
 * @example [reward]\nplugin = "sim-reward"
 */
export const simReward = definePlugin({
  name: "sim-reward",
  kind: "reward",
  configSchema: z.object({}).strict(),
  create(_config, ctx) {
    const rand = seededRandom(ctx.seed + 2);
    return {
      score: (t) => {
        const total = rand();
        return { turns: t.turns.map((_, i) => (i === t.turns.length - 1 ? total : 0)), total };
      },
    };
  },
});

/**
 * A trainer that takes `step_ms` per batch, one batch at a time (like a GPU trainer), and then publishes
 * weights version step + 1. Stands in for prime-rl's trainer when pipelining is measured.
 * @example [trainer]\nplugin = "sim-trainer"\nstep_ms = 800
 */
export const simTrainer = definePlugin({
  name: "sim-trainer",
  kind: "trainer",
  configSchema: z.object({ step_ms: z.number().min(0).describe("time one optimizer step takes") }).strict(),
  create(config, ctx) {
    let busyUntil = 0;
    const ready = new Map<number, number>();
    return {
      submit: async (batch) => {
        busyUntil = Math.max(Date.now(), busyUntil) + config.step_ms;
        ready.set(batch.step, busyUntil);
      },
      waitForWeights: async (step, signal): Promise<WeightsRef> => {
        const at = ready.get(step);
        if (at === undefined) throw new Error(`sim-trainer: no batch for step ${step}`);
        await sleep(Math.max(0, at - Date.now()), signal);
        ready.delete(step);
        return { version: step + 1, path: `${ctx.runDir}/broadcasts/step_${step + 1}`, kind: "full" };
      },
    };
  },
});

/** Every simulated plugin, for a registry. */
export const SIM_PLUGINS = [simEnv, simReward, simTrainer];
