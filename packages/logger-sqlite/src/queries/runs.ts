import { and, desc, eq, getTableColumns, isNotNull, max, type SQL, sql } from "drizzle-orm";
import type { StoreDb } from "../open.ts";
import { metrics, runs, steps, trajectories, turns } from "../schema.ts";

export type RunRecord = typeof runs.$inferSelect;

/** A scalar subquery as a typed column (`(SELECT …)`). */
export function scalar<T>(query: { getSQL(): SQL }): SQL<T> {
  return sql<T>`(${query.getSQL()})`;
}

/**
 * Every run, newest first, with its finished-step and trajectory counts and its last `reward/mean`.
 * @example for (const r of listRuns(db)) console.log(r.name, r.stepCount, r.lastReward);
 */
export function listRuns(db: StoreDb) {
  const lastReward = db
    .select({ value: metrics.value })
    .from(metrics)
    .where(and(eq(metrics.runId, runs.id), eq(metrics.name, "reward/mean")))
    .orderBy(desc(metrics.step))
    .limit(1);
  return db
    .select({
      ...getTableColumns(runs),
      stepCount: db.$count(steps, and(eq(steps.runId, runs.id), isNotNull(steps.endedAt))),
      trajectoryCount: db.$count(trajectories, eq(trajectories.runId, runs.id)),
      lastReward: scalar<number | null>(lastReward),
    })
    .from(runs)
    .orderBy(desc(runs.id))
    .all();
}
export type RunListRow = ReturnType<typeof listRuns>[number];

/**
 * One run, or undefined.
 * @example const run = getRun(db, 1);
 */
export function getRun(db: StoreDb, runId: number): RunRecord | undefined {
  return db.select().from(runs).where(eq(runs.id, runId)).get();
}

/**
 * A cheap change marker for live polling: last finished step, trajectory and metric counts, the newest turn
 * row and the status, folded into `version`. Undefined for an unknown run.
 * @example const { version } = runStatus(db, 1)!;
 */
export function runStatus(db: StoreDb, runId: number) {
  const lastStep = db
    .select({ step: max(steps.step) })
    .from(steps)
    .where(and(eq(steps.runId, runId), isNotNull(steps.endedAt)));
  const row = db
    .select({
      lastStep: scalar<number | null>(lastStep),
      trajectories: db.$count(trajectories, eq(trajectories.runId, runId)),
      metrics: db.$count(metrics, eq(metrics.runId, runId)),
      turns: sql<number | null>`(SELECT max(rowid) FROM ${turns})`,
      status: runs.status,
    })
    .from(runs)
    .where(eq(runs.id, runId))
    .get();
  if (!row) return undefined;
  return {
    lastStep: row.lastStep,
    trajectories: row.trajectories,
    version: `${row.lastStep}:${row.trajectories}:${row.metrics}:${row.turns}:${row.status}`,
    status: row.status,
  };
}
