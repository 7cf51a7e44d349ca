import { and, desc, eq, gte, inArray, notInArray, sql } from "drizzle-orm";
import type { StoreDb } from "./open.ts";
import {
  evaluations,
  logs,
  metrics,
  runs,
  samples,
  steps,
  trajectories,
  turnResume,
  turns,
  warnings,
} from "./schema.ts";

/** What `continueRun` did: the run it continues and how many rows of interrupted steps it dropped. */
export interface ContinuedRun {
  runId: number;
  droppedTrajectories: number;
  droppedSteps: number;
  /** Train rollouts of the resumed steps kept with their turns: each has a resume row on every turn. */
  kept: string[];
}

/**
 * On `rl --resume` at `startStep`: the newest air run recorded for `runDir` becomes running again (its end,
 * error and status cleared, `resumes` counted, a log line written) and every row of its steps from
 * `startStep` on — the interrupted step's trajectories, turns, samples, metrics, warnings, evaluations and
 * step rows — is deleted, so the resumed steps are recorded once. With `keepRollouts` (`orchestrator.resume_rollouts`)
 * the train rollouts of those steps whose every turn has its `turn_resume` row are kept with their turns (`kept`):
 * they continue from their last turn. Every other `turn_resume` row of the run is dropped (only these are read).
 * Undefined when the store has no such run.
 * @example const continued = continueRun(db, "outputs/quickstart", 3); // { runId: 1, droppedTrajectories: 5, … }
 */
export function continueRun(
  db: StoreDb,
  runDir: string,
  startStep: number,
  keepRollouts = false,
): ContinuedRun | undefined {
  const previous = db
    .select({ id: runs.id })
    .from(runs)
    .where(and(eq(runs.runDir, runDir), eq(runs.source, "air")))
    .orderBy(desc(runs.id))
    .limit(1)
    .get();
  if (!previous) return undefined;
  const runId = previous.id;
  return db.transaction((tx) => {
    const kept = keepRollouts ? resumable(db, runId, startStep) : [];
    const dropped = and(
      eq(trajectories.runId, runId),
      gte(trajectories.step, startStep),
      notInArray(trajectories.rolloutId, kept),
    );
    const rollouts = tx.select({ id: trajectories.rolloutId }).from(trajectories).where(dropped);
    tx.delete(turns)
      .where(and(eq(turns.runId, runId), inArray(turns.rolloutId, rollouts)))
      .run();
    tx.delete(turnResume)
      .where(and(eq(turnResume.runId, runId), notInArray(turnResume.rolloutId, kept)))
      .run();
    const droppedTrajectories = tx
      .delete(trajectories)
      .where(dropped)
      .returning({ id: trajectories.id })
      .all().length;
    tx.delete(samples)
      .where(and(eq(samples.runId, runId), gte(samples.step, startStep)))
      .run();
    tx.delete(metrics)
      .where(and(eq(metrics.runId, runId), gte(metrics.step, startStep)))
      .run();
    tx.delete(warnings)
      .where(and(eq(warnings.runId, runId), gte(warnings.step, startStep)))
      .run();
    tx.delete(evaluations)
      .where(and(eq(evaluations.runId, runId), gte(evaluations.step, startStep)))
      .run();
    const droppedSteps = tx
      .delete(steps)
      .where(and(eq(steps.runId, runId), gte(steps.step, startStep)))
      .returning({ step: steps.step })
      .all().length;
    const now = Date.now();
    tx.update(runs)
      .set({
        status: "running",
        error: null,
        endedAt: null,
        heartbeatAt: now,
        resumes: sql`${runs.resumes} + 1`,
      })
      .where(eq(runs.id, runId))
      .run();
    tx.insert(logs)
      .values({
        runId,
        level: "info",
        source: "sqlite",
        message: `resumed at step ${startStep}: dropped ${droppedTrajectories} trajectories of ${droppedSteps} interrupted step(s), kept ${kept.length} to continue`,
        timeMs: now,
      })
      .run();
    return { runId, droppedTrajectories, droppedSteps, kept };
  });
}

/** Train rollouts of steps ≥ `startStep` with at least one turn and a `turn_resume` row for each. */
function resumable(tx: Pick<StoreDb, "$client">, runId: number, startStep: number): string[] {
  const rows = tx.$client
    .query<{ id: string }, [number, number]>(
      `SELECT t.rollout_id AS id FROM trajectories t
       WHERE t.run_id = ?1 AND t.step >= ?2 AND t.split = 'train'
         AND (SELECT count(*) FROM turns u WHERE u.run_id = t.run_id AND u.rollout_id = t.rollout_id) > 0
         AND (SELECT count(*) FROM turns u WHERE u.run_id = t.run_id AND u.rollout_id = t.rollout_id) =
             (SELECT count(*) FROM turn_resume r WHERE r.run_id = t.run_id AND r.rollout_id = t.rollout_id)
       ORDER BY t.rollout_id`,
    )
    .all(runId, startStep);
  return rows.map((r) => r.id);
}
