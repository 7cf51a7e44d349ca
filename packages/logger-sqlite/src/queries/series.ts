import { and, asc, eq, like, ne, type SQL, sql } from "drizzle-orm";
import type { StoreDb } from "../open.ts";
import { evaluations, metrics, steps, trajectories } from "../schema.ts";

/** Rollouts trained on: a periodic evaluation's rollouts (split "eval") stay out of training stats. */
export const training = eq(trajectories.split, "train");

/** `avg(x)` as a number (drizzle's `avg` returns text for exactness; these are plain means for charts). */
export const mean = (x: SQL | { getSQL(): SQL }) => sql<number | null>`avg(${x})`;
/** `sum(condition)`: how many rows of the group match (null when the condition is null on every row). */
export const countWhere = (condition: SQL) => sql<number | null>`sum(${condition})`;

/**
 * Every stored metric of a run (step, trainer and eval sources), in step order.
 * @example for (const m of metricRows(db, 1)) chart(m.name).push([m.step, m.value]);
 */
export function metricRows(db: StoreDb, runId: number) {
  return db
    .select({ step: metrics.step, name: metrics.name, value: metrics.value, source: metrics.source })
    .from(metrics)
    .where(eq(metrics.runId, runId))
    .orderBy(asc(metrics.step))
    .all();
}

/**
 * Names of a run's metrics with their source ("step", "trainer" or "eval"), by name.
 * @example metricNames(db, 1).filter((m) => m.source === "trainer");
 */
export function metricNames(db: StoreDb, runId: number) {
  return db
    .selectDistinct({ name: metrics.name, source: metrics.source })
    .from(metrics)
    .where(eq(metrics.runId, runId))
    .orderBy(asc(metrics.name))
    .all();
}

/** A tool error that reads as a timeout. */
export const timedOut = (column: SQL | { getSQL(): SQL }) =>
  sql`(${column} LIKE '%timeout%' OR ${column} LIKE '%timed out%')`;

/**
 * A run's step rows (start/end times, counts), in step order.
 * @example stepRows(db, 1).filter((s) => s.endedAt !== null);
 */
export function stepRows(db: StoreDb, runId: number) {
  return db.select().from(steps).where(eq(steps.runId, runId)).orderBy(asc(steps.step)).all();
}

/**
 * Stored pass@k results of a run, averaged per checkpoint (or policy) and metric (`pass@1`, `pass@4`, …).
 * @example passAtK(db, 1).map((r) => [r.who, r.metric, r.value]);
 */
export function passAtK(db: StoreDb, runId: number) {
  const who = sql<string>`coalesce(${evaluations.checkpoint}, ${evaluations.policy})`;
  return db
    .select({ who, metric: evaluations.metric, value: sql<number>`avg(${evaluations.value})` })
    .from(evaluations)
    .where(and(eq(evaluations.runId, runId), like(evaluations.metric, "pass@%")))
    .groupBy(who, evaluations.metric)
    .all();
}

/**
 * A run's finished periodic-evaluation rollouts (split "eval", `orchestrator.eval_every`), by step: what pass@k
 * over training steps is computed from (a rollout succeeds when it beat its baseline, or else earned reward > 0).
 * @example evalRollouts(db, 1).filter((r) => r.step === 4).length;
 */
export function evalRollouts(db: StoreDb, runId: number) {
  return db
    .select({
      step: trajectories.step,
      task: trajectories.task,
      exampleId: trajectories.exampleId,
      status: trajectories.status,
      reward: trajectories.reward,
      improvement: trajectories.improvement,
    })
    .from(trajectories)
    .where(
      and(eq(trajectories.runId, runId), eq(trajectories.split, "eval"), ne(trajectories.status, "running")),
    )
    .orderBy(asc(trajectories.step), asc(trajectories.id))
    .all();
}
export type EvalRolloutRow = ReturnType<typeof evalRollouts>[number];
