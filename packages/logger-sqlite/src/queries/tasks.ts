import { asc, count, eq, max, sql } from "drizzle-orm";
import type { StoreDb } from "../open.ts";
import { evaluations } from "../schema.ts";

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
