import { and, asc, count, desc, eq, isNotNull, max, ne, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { StoreDb } from "../open.ts";
import { scalar } from "../queries/runs.ts";
import { countWhere, mean, timedOut, training } from "../queries/series.ts";
import { samples, trajectories, turns } from "../schema.ts";

/**
 * The charts' and tasks page's aggregates computed by scanning every trajectory, turn and sample row: what the
 * store's per-step totals (`step_totals`, `step_advantages`, read by queries/totals.ts) must equal. Tests only.
 */

/**
 * Per step, over the run's finished training trajectories (not eval rollouts): how many, the share that validated, how many failed and
 * the mean turn count.
 * @example const [first] = trajectoryStepStats(db, 1); first?.validateRate;
 */
export function scanTrajectoryStepStats(db: StoreDb, runId: number) {
  return db
    .select({
      step: trajectories.step,
      count: count(),
      validateRate: mean(trajectories.validated),
      failed: countWhere(sql`${trajectories.status} = 'failed'`),
      turns: mean(trajectories.turnCount),
    })
    .from(trajectories)
    .where(and(eq(trajectories.runId, runId), training, ne(trajectories.status, "running")))
    .groupBy(trajectories.step)
    .orderBy(asc(trajectories.step))
    .all();
}

/**
 * Per step (of the training trajectory), how many turns had a format, tool or evaluation error or a timed-out command.
 * @example turnErrorsPerStep(db, 1).map((r) => [r.step, r.parse]);
 */
export function scanTurnErrorsPerStep(db: StoreDb, runId: number) {
  return db
    .select({
      step: trajectories.step,
      parse: countWhere(isNotNull(turns.parseError)),
      tool: countWhere(isNotNull(turns.toolError)),
      evaluation: countWhere(isNotNull(turns.evaluationError)),
      timeouts: countWhere(timedOut(turns.toolError)),
    })
    .from(turns)
    .innerJoin(
      trajectories,
      and(eq(trajectories.runId, turns.runId), eq(trajectories.rolloutId, turns.rolloutId)),
    )
    .where(and(eq(turns.runId, runId), training))
    .groupBy(trajectories.step)
    .orderBy(asc(trajectories.step))
    .all();
}

/**
 * Per step and task, the mean final and baseline score of finished training trajectories.
 * @example taskScoresPerStep(db, 1).filter((r) => r.task === "titanic");
 */
export function scanTaskScoresPerStep(db: StoreDb, runId: number) {
  return db
    .select({
      step: trajectories.step,
      task: trajectories.task,
      finalScore: mean(trajectories.finalScore),
      baselineScore: mean(trajectories.baselineScore),
    })
    .from(trajectories)
    .where(and(eq(trajectories.runId, runId), training, ne(trajectories.status, "running")))
    .groupBy(trajectories.step, trajectories.task)
    .orderBy(asc(trajectories.step))
    .all();
}

/**
 * Every training sample's mean advantage, by step then value (for per-step quantiles).
 * @example const values = sampleAdvantages(db, 1).filter((s) => s.step === 3).map((s) => s.advantage);
 */
export function scanSampleAdvantages(db: StoreDb, runId: number) {
  return db
    .select({ step: samples.step, advantage: samples.advantageMean })
    .from(samples)
    .where(eq(samples.runId, runId))
    .orderBy(asc(samples.step), asc(samples.advantageMean))
    .all();
}

/**
 * The improvement of every training trajectory that has one, in recording order (one point per episode).
 * @example episodeImprovements(db, 1).at(-1);
 */
export function scanEpisodeImprovements(db: StoreDb, runId: number): number[] {
  return db
    .select({ improvement: trajectories.improvement })
    .from(trajectories)
    .where(and(eq(trajectories.runId, runId), training, isNotNull(trajectories.improvement)))
    .orderBy(asc(trajectories.id))
    .all()
    .flatMap((r) => (r.improvement === null ? [] : [r.improvement]));
}

/**
 * Per task, over finished training trajectories (a periodic evaluation's rollouts are left out): episodes, mean baseline and final score, the final score of the
 * episode that improved most (whatever the metric's direction), mean and best improvement, validate rate and
 * mean reward.
 * @example taskSummary(db, 1).map((t) => [t.task, t.bestFinal]);
 */
export function scanTaskSummary(db: StoreDb, runId: number) {
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
