import { z } from "zod";
import { sleep } from "../../pending.ts";
import { definePlugin } from "../../plugin.ts";
import { seededRandom } from "../../random.ts";

/**
 * What the `counting` env and the `random` policy saw; `runToml` resets it before each run.
 * @example await runToml(toml); expect(probes.envPeakOpen).toBeLessThanOrEqual(3);
 */
export const probes = { envOpen: 0, envPeakOpen: 0, policyInFlight: 0, policyPeakInFlight: 0 };

/**
 * Sets every probe back to 0.
 * @example resetProbes(); expect(probes.envOpen).toBe(0);
 */
export function resetProbes(): void {
  Object.assign(probes, { envOpen: 0, envPeakOpen: 0, policyInFlight: 0, policyPeakInFlight: 0 });
}

/**
 * Env `counting`: an episode ends when the agent says "stop"; a turn that says "score N" reports score N.
 * `fail_examples` make their sessions throw on step (the first `fail_times` opens), to test failure handling.
 * @example registry.register(countingEnv); // [env] plugin = "counting"  examples = 2
 */
export const countingEnv = definePlugin({
  name: "counting",
  kind: "env",
  configSchema: z.object({
    examples: z.number().int().positive().default(3).describe("number of examples ex0, ex1, …"),
    step_delay_ms: z.number().int().min(0).default(1).describe("sleep per env step"),
    fail_examples: z.array(z.string()).default([]).describe("example ids whose sessions throw on step"),
    fail_times: z
      .number()
      .int()
      .min(0)
      .default(1_000_000)
      .describe("throw only on this many first opens of a failing example (then succeed)"),
  }),
  create: (config) => {
    const failures = new Map<string, number>();
    return {
      examples: async () =>
        Array.from({ length: config.examples }, (_, i) => ({
          id: `ex${i}`,
          task: "counting",
          score: {
            priorityMetric: "score",
            directions: { score: "maximize" as const },
            baseline: { score: 0 },
          },
        })),
      open: async (example) => {
        const failing = config.fail_examples.includes(example.id);
        const n = failures.get(example.id) ?? 0;
        if (failing) failures.set(example.id, n + 1);
        const shouldFail = failing && n < config.fail_times;
        probes.envOpen++;
        probes.envPeakOpen = Math.max(probes.envPeakOpen, probes.envOpen);
        return {
          start: async () => [
            { role: "system" as const, content: "count" },
            { role: "user" as const, content: `example ${example.id}` },
          ],
          step: async (action) => {
            await sleep(config.step_delay_ms);
            if (shouldFail) throw new Error(`env crashed on ${example.id}`);
            const m = /score (-?\d+)/.exec(action.text);
            return {
              observation: `ok: ${action.text}`,
              done: action.text === "stop",
              scores: m ? { score: Number(m[1]) } : undefined,
              kind: m ? "validate" : "command",
            };
          },
          close: async () => {
            probes.envOpen--;
          },
        };
      },
    };
  },
});

/**
 * Policy `random`: seeded from the run's seed, says "stop" with `stop_prob`, else "score N" (N in 0–9);
 * its version advances on loadWeights; reports a `requests` counter per step.
 * @example registry.register(randomPolicy); // [policy] plugin = "random"  stop_prob = 1
 */
export const randomPolicy = definePlugin({
  name: "random",
  kind: "policy",
  configSchema: z.object({
    delay_ms: z.number().int().min(0).default(2).describe("sleep per generation"),
    stop_prob: z.number().min(0).max(1).default(0.3).describe("probability of saying stop"),
  }),
  create: (config, ctx) => {
    const random = seededRandom(ctx.seed + 1);
    let version = 0;
    let requests = 0;
    return {
      get version() {
        return version;
      },
      stepMetrics: () => {
        const out = { requests };
        requests = 0;
        return out;
      },
      loadWeights: async (ref) => {
        version = ref.version;
      },
      generate: async ({ messages }) => {
        requests++;
        probes.policyInFlight++;
        probes.policyPeakInFlight = Math.max(probes.policyPeakInFlight, probes.policyInFlight);
        await sleep(config.delay_ms);
        probes.policyInFlight--;
        const text = random() < config.stop_prob ? "stop" : `score ${Math.floor(random() * 10)}`;
        const completionTokenIds = [...text].map((c) => c.charCodeAt(0));
        return {
          action: { text },
          promptTokenIds: messages
            .flatMap((m) => [...m.content].map((c) => c.charCodeAt(0) % 256))
            .slice(-64),
          completionTokenIds,
          completionLogprobs: completionTokenIds.map(() => -1),
          finishReason: "stop",
          policyVersion: version,
          temperature: 1,
        };
      },
    };
  },
});
