import { z } from "zod";

/**
 * `[orchestrator.tree]`: tree rollouts. Each example of a step grows `roots` independent episodes; at a branch
 * point a node's env session is forked (`EnvSession.fork`) into `branching_factor` continuations. The leaves of
 * an example are its rollouts: at most `rollouts_per_example` of them, so they count against `batch_size` and
 * `max_concurrent_rollouts` as flat rollouts do. Without this section the orchestrator runs flat rollouts.
 * @example
 * // [orchestrator.tree]
 * // roots = 2
 * // branching_factor = 2
 * // branch_turns = [1]
 */
export const treeSection = z
  .object({
    roots: z
      .number()
      .int()
      .positive()
      .default(1)
      .describe("independent episodes per example (siblings of each other); at most rollouts_per_example"),
    branching_factor: z
      .number()
      .int()
      .min(2)
      .default(2)
      .describe("continuations a node forks into at a branch point (the node's own session is one of them)"),
    branch_turns: z
      .array(z.number().int().min(0))
      .default([1])
      .describe("fork after this many turns (0 = right after start, before the first turn)"),
    branch_every: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe("also fork every k turns (k, 2k, ...); 0 = off"),
    branch_on_validate: z
      .boolean()
      .default(false)
      .describe("also fork after a turn that produced scores (a validate)"),
    global_weight: z
      .number()
      .min(0)
      .default(0)
      .describe(
        "weight of TreeRL's global term V(node) − V(all leaves) added to the sibling advantage; 0 = siblings only",
      ),
    sqrt_leaves: z
      .boolean()
      .default(false)
      .describe(
        "divide a node's advantage by √(its leaves), as TreeRL does (siblings then need equal leaves to sum to 0)",
      ),
  })
  .strict();

export type TreeConfig = z.output<typeof treeSection>;
