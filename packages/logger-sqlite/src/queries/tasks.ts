import { and, asc, count, desc, eq, isNotNull, max, ne, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { StoreDb } from "../open.ts";
import { evaluations, trajectories } from "../schema.ts";
import { scalar } from "./runs.ts";
import { mean, training } from "./series.ts";

/**
 * Per task, over finished training trajectories (a periodic evaluation's rollouts are left out): episodes, mean baseline and final score, the final score of the
 * episode that improved most (whatever the metric's direction), mean and best improvement, validate rate and
 * mean reward.
 * @example taskSummary(db, 1).map((t) => [t.task, t.bestFinal]);
 */
export function taskSummary(db: StoreDb, runId: number) {
  const best = alias(trajectories, "best");
  const bestFinal = db
    .select({ finalScore: best.finalScore })
    .from(best)
    .where(
      and(
        eq(best.runId, runId),
        eq(best.task, trajectories.task),
        eq(best.split, "train"),
        isNotNull(best.improvement),
      ),
    )
    .orderBy(desc(best.improvement))
    .limit(1);
  return db
    .select({
      task: trajectories.task,
      episodes: count(),
      baseline: mean(trajectories.baselineScore),
      avgFinal: mean(trajectories.finalScore),
      bestFinal: scalar<number | null>(bestFinal),
      avgImprovement: mean(trajectories.improvement),
      bestImprovement: max(trajectories.improvement),
      validateRate: mean(trajectories.validated),
      avgReward: mean(trajectories.reward),
    })
    .from(trajectories)
    .where(and(eq(trajectories.runId, runId), training, ne(trajectories.status, "running")))
    .groupBy(trajectories.task)
    .orderBy(asc(trajectories.task))
    .all();
}
export type TaskSummaryRow = ReturnType<typeof taskSummary>[number];

/**
 * A run's stored evaluation results (written by eval), averaged per task, policy, checkpoint and metric.
 * @example storedEvaluations(db, 1).filter((e) => e.metric === "pass@1");
 */
export function storedEvaluations(db: StoreDb, runId: number) {
  return db
    .select({
      task: evaluations.task,
      policy: evaluations.policy,
      checkpoint: evaluations.checkpoint,
      metric: evaluations.metric,
      value: sql<number>`avg(${evaluations.value})`,
      n: count(),
      createdAt: max(evaluations.createdAt),
    })
    .from(evaluations)
    .where(eq(evaluations.runId, runId))
    .groupBy(evaluations.task, evaluations.policy, evaluations.checkpoint, evaluations.metric)
    .orderBy(asc(evaluations.task), asc(evaluations.policy), asc(evaluations.metric))
    .all();
}
