import { z } from "zod";

/** Query parameters of the trajectory list; anything else is a 400. Its output is logger-sqlite's `TrajectoryFilter`. */
export const trajectoryQuery = z
  .object({
    page: z.coerce.number().int().min(1).max(1_000_000).default(1),
    per: z.coerce.number().int().min(1).max(200).default(50),
    task: z.string().max(200).optional(),
    step: z.coerce.number().int().min(0).optional(),
    status: z.enum(["running", "done", "failed"]).optional(),
    validated: z.enum(["yes", "no"]).optional(),
    q: z.string().max(200).optional(),
    flagged: z.enum(["yes"]).optional(),
    sort: z.enum(["step", "reward", "improvement", "final_score"]).default("step"),
  })
  .strict();
export type TrajectoryQuery = z.output<typeof trajectoryQuery>;
