import { integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** The per-step totals behind the dashboard's charts and tasks page (part of schema.ts's tables). */

/**
 * Per run, step, split and task: totals of its trajectories and of their turns' errors, kept by triggers
 * (drizzle/0005_step_totals.sql) on every insert, update and delete of `trajectories` and `turns`, and
 * backfilled when an older store is migrated. The charts and the tasks page read these O(steps × tasks) rows
 * instead of aggregating every trajectory and turn. Sums and counts are over finished trajectories (status
 * other than "running"); `*N` counts the non-null values a mean divides by. The turn error counts cover every
 * turn stored, finished trajectory or not.
 */
export const stepTotals = sqliteTable(
  "step_totals",
  {
    runId: integer("run_id").notNull(),
    step: integer("step").notNull(),
    split: text("split").notNull().$type<"train" | "eval">(),
    task: text("task").notNull(),
    /** Trajectory rows of the bucket, running or not (a bucket whose rows were all deleted has 0). */
    rollouts: integer("rollouts").notNull().default(0),
    episodes: integer("episodes").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    turns: integer("turns").notNull().default(0),
    validatedN: integer("validated_n").notNull().default(0),
    validatedSum: integer("validated_sum").notNull().default(0),
    rewardN: integer("reward_n").notNull().default(0),
    rewardSum: real("reward_sum").notNull().default(0),
    finalN: integer("final_n").notNull().default(0),
    finalSum: real("final_sum").notNull().default(0),
    baselineN: integer("baseline_n").notNull().default(0),
    baselineSum: real("baseline_sum").notNull().default(0),
    improvementN: integer("improvement_n").notNull().default(0),
    improvementSum: real("improvement_sum").notNull().default(0),
    /** The highest improvement of the bucket's finished trajectories, and that trajectory's final score. */
    bestImprovement: real("best_improvement"),
    bestFinal: real("best_final"),
    parseErrors: integer("parse_errors").notNull().default(0),
    toolErrors: integer("tool_errors").notNull().default(0),
    evaluationErrors: integer("evaluation_errors").notNull().default(0),
    /** Tool errors that read as a timeout ("timeout" or "timed out"). */
    timeouts: integer("timeouts").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.runId, t.step, t.split, t.task] })],
);

/**
 * Per run and ended step: the samples' mean advantages at the percentiles q = 0…100 (linear interpolation
 * between the two nearest ranks, as numpy's default), and how many samples. Written by a trigger when the
 * step's row gets its `ended_at` (the recorder writes the step's samples first), so the advantage heatmap reads
 * 101 rows per step instead of every sample.
 */
export const stepAdvantages = sqliteTable(
  "step_advantages",
  {
    runId: integer("run_id").notNull(),
    step: integer("step").notNull(),
    q: integer("q").notNull(),
    value: real("value").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.step, t.q] })],
);
