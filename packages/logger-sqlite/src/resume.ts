import { and, desc, eq, gte, inArray, notInArray, or, sql } from "drizzle-orm";
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
  /** Train rollouts of the resumed steps (and eval rollouts of a cut-short eval) kept with their turns: each has a resume row on every turn. */
  kept: string[];
  /** Set when the eval after step `startStep − 1` has rollouts here but no eval:end: the loop runs it again. */
  cutShortEval?: { step: number; dropped: number; kept: number };
}

/**
 * Whether run `runId` recorded the end of the eval after step `step` (eval:end: its `evaluations` rows, written in
 * one transaction with its metrics).
 * @example evalRecorded(db, 1, 3) // false: the launcher was killed during the eval after step 3
 */
export function evalRecorded(db: Pick<StoreDb, "$client">, runId: number, step: number): boolean {
  return (
    db.$client
      .query<{ n: number }, [number, number]>(
        "SELECT count(*) AS n FROM evaluations WHERE run_id = ?1 AND step = ?2",
      )
      .get(runId, step)?.n !== 0
  );
}

/**
 * On `rl --resume` at `startStep`: the newest air run recorded for `runDir` becomes running again (its end,
 * error and status cleared, `resumes` counted, a log line written) and every row of its steps from
 * `startStep` on — the interrupted step's trajectories, turns, samples, metrics, warnings, evaluations and
 * step rows — is deleted, so the resumed steps are recorded once. With `keepRollouts` (`orchestrator.resume_rollouts`)
 * the train rollouts of those steps whose every turn has its `turn_resume` row are kept with their turns (`kept`):
 * they continue from their last turn. The eval after step `startStep − 1` (run once that step's weights arrived)
 * is cut short when it has no eval:end (`evalRecorded`): the loop runs it again, so its rollouts go too, but for
 * those kept the same way. Every other `turn_resume` row of the run is dropped (only these are read).
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
    const evalStep = startStep - 1;
    const cutShort = !evalRecorded(db, runId, evalStep);
    const keptRows = keepRollouts ? resumable(db, runId, startStep, cutShort) : [];
    const kept = keptRows.map((r) => r.id);
    const ofEval = and(eq(trajectories.split, "eval"), eq(trajectories.step, evalStep));
    const dropped = and(
      eq(trajectories.runId, runId),
      cutShort ? or(gte(trajectories.step, startStep), ofEval) : gte(trajectories.step, startStep),
      notInArray(trajectories.rolloutId, kept),
    );
    const droppedEval = cutShort
      ? (tx.select({ n: sql<number>`count(*)` }).from(trajectories).where(and(dropped, ofEval)).get()?.n ?? 0)
      : 0;
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
    if (cutShort)
      tx.delete(metrics)
        .where(and(eq(metrics.runId, runId), eq(metrics.step, evalStep), eq(metrics.source, "eval")))
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
    const evalKept = keptRows.filter((r) => r.split === "eval").length;
    const cutShortEval =
      cutShort && droppedEval + evalKept > 0
        ? { step: evalStep, dropped: droppedEval, kept: evalKept }
        : undefined;
    const evalNote = cutShortEval
      ? `; the eval after step ${evalStep} was cut short: dropped ${droppedEval} of its rollouts, kept ${evalKept}, it runs again`
      : "";
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
        message: `resumed at step ${startStep}: dropped ${droppedTrajectories} trajectories of ${droppedSteps} interrupted step(s), kept ${kept.length} to continue${evalNote}`,
        timeMs: now,
      })
      .run();
    return { runId, droppedTrajectories, droppedSteps, kept, ...(cutShortEval ? { cutShortEval } : {}) };
  });
}

/**
 * Train rollouts of steps ≥ `startStep` (and, with `evalToo`, eval rollouts of step `startStep − 1`) with at least
 * one turn and a `turn_resume` row for each.
 */
function resumable(
  tx: Pick<StoreDb, "$client">,
  runId: number,
  startStep: number,
  evalToo: boolean,
): Array<{ id: string; split: string }> {
  return tx.$client
    .query<{ id: string; split: string }, [number, number, number]>(
      `SELECT t.rollout_id AS id, t.split AS split FROM trajectories t
       WHERE t.run_id = ?1
         AND ((t.step >= ?2 AND t.split = 'train') OR (?3 AND t.step = ?2 - 1 AND t.split = 'eval'))
         AND (SELECT count(*) FROM turns u WHERE u.run_id = t.run_id AND u.rollout_id = t.rollout_id) > 0
         AND (SELECT count(*) FROM turns u WHERE u.run_id = t.run_id AND u.rollout_id = t.rollout_id) =
             (SELECT count(*) FROM turn_resume r WHERE r.run_id = t.run_id AND r.rollout_id = t.rollout_id)
       ORDER BY t.rollout_id`,
    )
    .all(runId, startStep, evalToo ? 1 : 0);
}
