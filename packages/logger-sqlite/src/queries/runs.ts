import { and, desc, eq, getTableColumns, isNotNull, max, type SQL, sql } from "drizzle-orm";
import type { StoreDb } from "../open.ts";
import { metrics, runs, steps, trajectories, turns } from "../schema.ts";

export type RunRecord = typeof runs.$inferSelect;

/**
 * How old a running run's heartbeat may get before a reader calls the run dead: six of the recorder's
 * 5-second heartbeats missed.
 */
export const STALE_MS = 30_000;

/** A run's status as a reader should show it: "dead" when stored "running" but its writer stopped beating. */
export type LiveStatus = string;

/**
 * The status to show: the stored one, except that a "running" run whose heartbeat (or, for a store written
 * before heartbeats, its start) is older than `staleMs` is "dead" — its launcher was killed before it could
 * write the run's end.
 * @example liveStatus({ status: "running", heartbeatAt: Date.now() - 60_000, startedAt: 0 }) // "dead"
 */
export function liveStatus(
  run: Pick<RunRecord, "status" | "heartbeatAt" | "startedAt">,
  now = Date.now(),
  staleMs = STALE_MS,
): LiveStatus {
  if (run.status !== "running") return run.status;
  return now - (run.heartbeatAt ?? run.startedAt) > staleMs ? "dead" : "running";
}

/** A scalar subquery as a typed column (`(SELECT …)`). */
export function scalar<T>(query: { getSQL(): SQL }): SQL<T> {
  return sql<T>`(${query.getSQL()})`;
}

/**
 * Every run, newest first, with its finished-step and trajectory counts, its last `reward/mean` and `state`
 * (`liveStatus`: "dead" for a running run without a fresh heartbeat).
 * @example for (const r of listRuns(db)) console.log(r.name, r.state, r.stepCount, r.lastReward);
 */
export function listRuns(db: StoreDb, now = Date.now()) {
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
    .all()
    .map((r) => ({ ...r, state: liveStatus(r, now) }));
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
 * What a live stream keeps between polls: the run's trajectory count up to trajectory row `lastId`. With it,
 * `runStatus` counts only the trajectory rows added since (rows are upserted, never re-inserted, so the count
 * stays exact): a poll reads O(new rows), not the run.
 */
export interface StatusTally {
  trajectories: number;
  lastId: number;
}

/** Counts the run's trajectory rows after `tally.lastId` into `tally`. */
function countNewTrajectories(db: StoreDb, runId: number, tally: StatusTally): number {
  const [row] = db.all<{ n: number; last: number | null }>(
    sql`SELECT count(*) AS n, max(id) AS last FROM ${trajectories} WHERE id > ${tally.lastId} AND run_id = ${runId}`,
  );
  tally.trajectories += row?.n ?? 0;
  tally.lastId = Math.max(tally.lastId, row?.last ?? 0);
  return tally.trajectories;
}

/**
 * A cheap change marker for live polling: last finished step, the trajectory count, the newest metric and turn
 * rows and the status as shown (`state`, see `liveStatus`), folded into `version`. Undefined for an unknown run.
 * Pass the same `tally` on every poll of a live stream so each poll reads only new trajectory rows.
 * @example const tally = { trajectories: 0, lastId: 0 }; const { version, state } = runStatus(db, 1, Date.now(), tally)!;
 */
export function runStatus(db: StoreDb, runId: number, now = Date.now(), tally?: StatusTally) {
  const lastStep = db
    .select({ step: max(steps.step) })
    .from(steps)
    .where(and(eq(steps.runId, runId), isNotNull(steps.endedAt)));
  const row = db
    .select({
      lastStep: scalar<number | null>(lastStep),
      trajectories: tally ? sql<number>`0` : db.$count(trajectories, eq(trajectories.runId, runId)),
      metrics: sql<number | null>`(SELECT max(rowid) FROM ${metrics})`,
      turns: sql<number | null>`(SELECT max(rowid) FROM ${turns})`,
      status: runs.status,
      heartbeatAt: runs.heartbeatAt,
      startedAt: runs.startedAt,
      resumes: runs.resumes,
    })
    .from(runs)
    .where(eq(runs.id, runId))
    .get();
  if (!row) return undefined;
  const state = liveStatus(row, now);
  const count = tally ? countNewTrajectories(db, runId, tally) : row.trajectories;
  return {
    lastStep: row.lastStep,
    trajectories: count,
    version: `${row.lastStep}:${count}:${row.metrics}:${row.turns}:${state}:${row.resumes}`,
    status: row.status,
    state,
    heartbeatAt: row.heartbeatAt,
    resumes: row.resumes,
  };
}
