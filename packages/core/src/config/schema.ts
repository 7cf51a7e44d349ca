import { z } from "zod";
import { treeSection } from "../loop/tree-config.ts";

/** A plugin section: `plugin` names a built-in or a path to a .ts file; the rest is the plugin's own config. */
export const pluginSection = z
  .object({ plugin: z.string().min(1).describe("built-in plugin name or path to a .ts file") })
  .catchall(z.unknown());

/** A `[[reward]]` entry: a plugin section plus its weight and a name for the breakdown. */
export const rewardSection = pluginSection.extend({
  weight: z.number().default(1).describe("weight of this reward in the turn's total"),
  name: z.string().optional().describe("name in the reward breakdown (default: the plugin name)"),
});

const timeouts = z
  .object({
    env_open_ms: z.number().int().positive().default(120_000),
    env_step_ms: z.number().int().positive().default(3_600_000).describe("upper bound on one env step"),
    generate_ms: z.number().int().positive().default(600_000),
    reward_ms: z.number().int().positive().default(60_000),
    trainer_submit_ms: z.number().int().positive().default(600_000),
    weights_ms: z.number().int().positive().default(3_600_000),
    hook_ms: z.number().int().positive().default(30_000),
  })
  .strict()
  .prefault({});

export const orchestratorSection = z
  .object({
    batch_size: z.number().int().positive().default(8).describe("rollouts per step"),
    rollouts_per_example: z.number().int().positive().default(4).describe("group size"),
    max_concurrent_rollouts: z.number().int().positive().default(32),
    max_off_policy_steps: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe("how many versions a sample may lag the trained policy; 0 = synchronous"),
    max_turns: z.number().int().positive().default(10),
    rollout_retries: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe("retries of a rollout whose env/policy failed"),
    resume_rollouts: z
      .boolean()
      .default(true)
      .describe(
        "record each turn's env state (sandbox snapshot, session counters) so `rl --resume` continues in-flight rollouts from their last turn",
      ),
    failed_groups: z
      .enum(["drop", "keep"])
      .default("drop")
      .describe("drop the group of a failed rollout, or keep its other rollouts"),
    filter_zero_advantages: z
      .boolean()
      .default(false)
      .describe("drop samples whose advantage is 0 everywhere (prime-rl's filter_zero_advantages)"),
    eval_every: z.number().int().min(0).default(0).describe("evaluate every N steps (0 = never)"),
    max_failed_steps: z
      .number()
      .int()
      .min(0)
      .default(3)
      .describe("stop the run (failed) after this many steps in a row where every rollout failed; 0 = never"),
    timeouts,
    tree: treeSection
      .optional()
      .describe(
        "tree rollouts: fork the env session at branch turns (see loop/tree-config.ts); unset = flat",
      ),
  })
  .strict()
  .refine((o) => o.batch_size % o.rollouts_per_example === 0, {
    message: "batch_size must be a multiple of rollouts_per_example",
    path: ["batch_size"],
  })
  .refine((o) => !o.tree || o.tree.roots <= o.rollouts_per_example, {
    message: "tree.roots must be at most rollouts_per_example (the leaves of an example are its rollouts)",
    path: ["tree", "roots"],
  });

export const runSection = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]+$/, "use letters, digits, '.', '_' or '-'")
      .default("run"),
    output_dir: z.string().default("outputs").describe("relative paths are relative to the TOML file"),
    max_steps: z.number().int().positive().default(10),
    seed: z.number().int().default(0),
    log_level: z.enum(["debug", "info", "warn", "error"]).default("info"),
  })
  .strict()
  .prefault({});

export const modelSection = z
  .object({
    name: z
      .string()
      .default("tiny")
      .describe('HF model name or local model directory; "./…" and "../…" are relative to the TOML file'),
    max_model_len: z.number().int().positive().optional(),
  })
  .strict()
  .prefault({});

/** Builds the root schema; callers (the launcher) add sections of their own such as `deployment`. */
export function rootSchema(extraSections: Record<string, z.ZodType> = {}) {
  return z
    .object({
      run: runSection,
      model: modelSection,
      orchestrator: orchestratorSection.prefault({}),
      env: pluginSection,
      policy: pluginSection,
      trainer: pluginSection.prefault({ plugin: "none" }),
      advantage: pluginSection.prefault({ plugin: "grpo" }),
      strategy: pluginSection.prefault({ plugin: "branching" }),
      reward: z.union([rewardSection, z.array(rewardSection).min(1)]),
      logger: z.union([pluginSection, z.array(pluginSection)]).prefault([{ plugin: "console" }]),
      ...extraSections,
    })
    .strict();
}

export type RootConfig = z.output<ReturnType<typeof rootSchema>>;
export type OrchestratorConfig = z.output<typeof orchestratorSection>;
