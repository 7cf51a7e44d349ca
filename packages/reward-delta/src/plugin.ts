import { definePlugin } from "@air/core";
import { deltaRewards } from "./delta.ts";
import { auditNoise } from "./noise.ts";
import { deltaConfigSchema } from "./options.ts";

/**
 * The `delta` reward: improvement of the task's priority metric at each validate/submit, signed by the
 * metric's direction. Metrics land in `trajectory.metrics` as `reward/<name>/<metric>`.
 * @example
 * // rl.toml
 * // [[reward]]
 * // plugin = "delta"
 * // relative_to = "previous"
 * // terminal_weight = 0.5
 */
export const deltaReward = definePlugin({
  name: "delta",
  kind: "reward",
  description: "improvement of the priority metric at each validate/submit, aware of metric direction",
  configSchema: deltaConfigSchema,
  launch: {
    // `rl check` and rl's preflight: min_improvement = "noise" needs the audit's noise (ctx.audit).
    preflight: (config, ctx) =>
      config.min_improvement === "noise"
        ? [
            {
              name: "delta: evaluation noise for min_improvement",
              status: "ok",
              message: `from the latest audit: ${JSON.stringify(auditNoise(ctx.audit))}`,
            },
          ]
        : [],
  },
  create: (config, ctx) => {
    const warn = (message: string) => ctx.log.warn(message);
    if (config.min_improvement !== "noise")
      return { score: (trajectory) => deltaRewards(trajectory, config, warn) };
    const noise = auditNoise(ctx.audit);
    ctx.log.info(`delta: min_improvement = evaluation noise per task ${JSON.stringify(noise)}`);
    const unknown = new Set<string>();
    return {
      score: (trajectory) => {
        const min = noise[trajectory.task];
        if (min === undefined && !unknown.has(trajectory.task)) {
          unknown.add(trajectory.task);
          warn(
            `delta: no evaluation noise for task ${trajectory.task} in the latest audit; every change counts`,
          );
        }
        return deltaRewards(trajectory, config, warn, min ?? 0);
      },
    };
  },
});
