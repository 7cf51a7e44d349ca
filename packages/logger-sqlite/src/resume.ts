import { and, desc, eq, gte, inArray, sql } from "drizzle-orm";
import type { StoreDb } from "./open.ts";
import { evaluations, logs, metrics, runs, samples, steps, trajectories, turns, warnings } from "./schema.ts";

/** What `continueRun` did: the run it continues and how many rows of interrupted steps it dropped. */
export interface ContinuedRun {
  runId: number;
  droppedTrajectories: number;
  droppedSteps: number;
}

/**
 * On `rl --resume` at `startStep`: the newest air run recorded for `runDir` becomes running again (its end,
 * error and status cleared, `resumes` counted, a log line written) and every row of its steps from
 * `startStep` on — the interrupted step's trajectories, turns, samples, metrics, warnings, evaluations and
 * step rows — is deleted, so the resumed steps are recorded once. Undefined when the store has no such run.
 * @example const continued = continueRun(db, "outputs/quickstart", 3); // { runId: 1, droppedTrajectories: 5, … }
 */
export function continueRun(db: StoreDb, runDir: string, startStep: number): ContinuedRun | undefined {
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
    const rollouts = tx
      .select({ id: trajectories.rolloutId })
      .from(trajectories)
      .where(and(eq(trajectories.runId, runId), gte(trajectories.step, startStep)));
    tx.delete(turns)
      .where(and(eq(turns.runId, runId), inArray(turns.rolloutId, rollouts)))
      .run();
    const droppedTrajectories = tx
      .delete(trajectories)
      .where(and(eq(trajectories.runId, runId), gte(trajectories.step, startStep)))
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
        message: `resumed at step ${startStep}: dropped ${droppedTrajectories} trajectories of ${droppedSteps} interrupted step(s)`,
        timeMs: now,
      })
      .run();
    return { runId, droppedTrajectories, droppedSteps };
  });
}
