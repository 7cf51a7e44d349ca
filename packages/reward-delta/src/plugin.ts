import { definePlugin } from "@air/core";
import { deltaRewards } from "./delta.ts";
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
  create: (config, ctx) => ({
    score: (trajectory) => deltaRewards(trajectory, config, (message) => ctx.log.warn(message)),
  }),
});
