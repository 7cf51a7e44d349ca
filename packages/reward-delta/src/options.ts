import { z } from "zod";

/**
 * Config of the `delta` reward (a `[[reward]]` section). Formulas: packages/reward-delta/README.md.
 * @example deltaConfigSchema.parse({ relative_to: "best", clip: 1 })
 */
export const deltaConfigSchema = z.object({
  metric: z
    .string()
    .min(1)
    .optional()
    .describe("metric to follow; default: the task's ScoreSpec priorityMetric"),
  direction: z
    .enum(["maximize", "minimize"])
    .optional()
    .describe("override the metric's direction; default: the ScoreSpec's, else maximize"),
  relative_to: z
    .enum(["previous", "best"])
    .default("previous")
    .describe("improvement over the previous valid score, or over the best score so far"),
  scale: z.number().finite().default(1).describe("multiplies every improvement"),
  clip: z.number().positive().optional().describe("clip each reward component to [-clip, clip]"),
  normalize: z
    .enum(["none", "baseline"])
    .default("none")
    .describe('"baseline" divides improvements by |baseline| (relative improvement)'),
  eps: z
    .number()
    .positive()
    .default(1e-8)
    .describe("a |baseline| below eps is not divided by (the divisor falls back to 1)"),
  terminal_weight: z
    .number()
    .finite()
    .default(0)
    .describe("adds terminal_weight × (final − baseline) improvement to the last turn"),
  no_score_reward: z.number().finite().default(0).describe("reward of a turn that did not evaluate"),
  invalid_reward: z
    .number()
    .finite()
    .default(0)
    .describe("reward of a turn whose evaluation failed or gave no finite value of the metric"),
  score_kinds: z
    .array(z.string().min(1))
    .optional()
    .describe('step kinds whose scores count, e.g. ["submit", "auto_submit"]; default: every scored turn'),
  on_tamper: z
    .enum(["keep", "zero"])
    .default("keep")
    .describe(
      'turns the env flagged as tampering (`info.tamper`: reading ground truth, changing evaluation files, printing metric JSON, …): "keep" pays them as usual (counted in tamper_turns), "zero" gives them 0 and keeps their score out of the reference',
    ),
  min_improvement: z
    .union([z.number().finite().min(0), z.literal("noise")])
    .default(0)
    .describe(
      'a change of the metric smaller than this (either way, in metric units) earns 0 and leaves the reference where it was; "noise": each task\'s evaluation noise from the latest `bun run audit` in <run dir>/air.db',
    ),
  missing_baseline: z
    .enum(["first_score", "zero"])
    .default("first_score")
    .describe("without a baseline: the first valid score becomes the reference (reward 0), or 0 is"),
});

export type DeltaConfig = z.output<typeof deltaConfigSchema>;

/** The defaults of every option. @example deltaRewards(trajectory, { ...DELTA_DEFAULTS, scale: 10 }) */
export const DELTA_DEFAULTS: DeltaConfig = deltaConfigSchema.parse({});
