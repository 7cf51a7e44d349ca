import { and, asc, desc, eq, gt, isNotNull, max, type SQL, sql, sum } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { StoreDb } from "../open.ts";
import { stepTotals as t, trajectories } from "../schema.ts";
import { scalar } from "./runs.ts";

/**
 * The per-step totals (`step_totals`, kept by triggers as rows are written) behind the charts and the tasks
 * page: each query here reads O(steps × tasks) rows however many trajectories and turns the run has.
 * Means are sums ÷ the count of non-null values, as SQL's `avg` over the rows would give.
 */

/** `sum(total) ÷ sum(n)`, null when no row had a value (as `avg`). */
const ratio = (total: SQL | { getSQL(): SQL }, n: SQL | { getSQL(): SQL }) =>
  sql<number | null>`sum(${total}) * 1.0 / nullif(sum(${n}), 0)`;
/** `sum(x)` as a number (drizzle's `sum` returns text). */
const total = (x: SQL | { getSQL(): SQL }) => sql<number>`coalesce(sum(${x}), 0)`;
const train = (runId: number) => and(eq(t.runId, runId), eq(t.split, "train"));

/**
 * Per step, over the run's finished training trajectories (not eval rollouts): how many, the share that
 * validated, how many failed and the mean turn count.
 * @example const [first] = trajectoryStepStats(db, 1); first?.validateRate;
 */
export function trajectoryStepStats(db: StoreDb, runId: number) {
  return db
    .select({
      step: t.step,
      count: total(t.episodes),
      validateRate: ratio(t.validatedSum, t.validatedN),
      failed: total(t.failed),
      turns: ratio(t.turns, t.episodes),
    })
    .from(t)
    .where(train(runId))
    .groupBy(t.step)
    .having(gt(sum(t.episodes), 0))
    .orderBy(asc(t.step))
    .all();
}

/**
 * Per step (of the training trajectory), how many turns had a format, tool or evaluation error or a timed-out
 * command; steps with trajectories but no error have zeros (a scan of the turns omits a step without turns).
 * @example turnErrorsPerStep(db, 1).map((r) => [r.step, r.parse]);
 */
export function turnErrorsPerStep(db: StoreDb, runId: number) {
  return db
    .select({
      step: t.step,
      parse: total(t.parseErrors),
      tool: total(t.toolErrors),
      evaluation: total(t.evaluationErrors),
      // Null for a step without any tool error (no timeout point), as `sum` over no matching row.
      timeouts: sql<number | null>`CASE WHEN sum(${t.toolErrors}) > 0 THEN sum(${t.timeouts}) END`,
    })
    .from(t)
    .where(train(runId))
    .groupBy(t.step)
    .having(gt(sum(t.rollouts), 0))
    .orderBy(asc(t.step))
    .all();
}

/**
 * Per step and task, the mean final and baseline score of finished training trajectories.
 * @example taskScoresPerStep(db, 1).filter((r) => r.task === "titanic");
 */
export function taskScoresPerStep(db: StoreDb, runId: number) {
  return db
    .select({
      step: t.step,
      task: t.task,
      finalScore: sql<number | null>`${t.finalSum} * 1.0 / nullif(${t.finalN}, 0)`,
      baselineScore: sql<number | null>`${t.baselineSum} * 1.0 / nullif(${t.baselineN}, 0)`,
    })
    .from(t)
    .where(and(train(runId), gt(t.episodes, 0)))
    .orderBy(asc(t.step), asc(t.task))
    .all();
}

/**
 * Per task, over finished training trajectories (a periodic evaluation's rollouts are left out): episodes, mean
 * baseline and final score, the final score of the episode that improved most (whatever the metric's
 * direction), mean and best improvement, validate rate and mean reward.
 * @example taskSummary(db, 1).map((t) => [t.task, t.bestFinal]);
 */
export function taskSummary(db: StoreDb, runId: number) {
  const best = alias(t, "best");
  const bestFinal = db
    .select({ bestFinal: best.bestFinal })
    .from(best)
    .where(
      and(
        eq(best.runId, runId),
        eq(best.split, "train"),
        eq(best.task, t.task),
        isNotNull(best.bestImprovement),
      ),
    )
    .orderBy(desc(best.bestImprovement))
    .limit(1);
  return db
    .select({
      task: t.task,
      episodes: total(t.episodes),
      baseline: ratio(t.baselineSum, t.baselineN),
      avgFinal: ratio(t.finalSum, t.finalN),
      bestFinal: scalar<number | null>(bestFinal),
      avgImprovement: ratio(t.improvementSum, t.improvementN),
      bestImprovement: max(t.bestImprovement),
      validateRate: ratio(t.validatedSum, t.validatedN),
      avgReward: ratio(t.rewardSum, t.rewardN),
    })
    .from(t)
    .where(train(runId))
    .groupBy(t.task)
    .having(gt(sum(t.episodes), 0))
    .orderBy(asc(t.task))
    .all();
}
export type TaskSummaryRow = ReturnType<typeof taskSummary>[number];

/**
 * Each ended step's sample advantages at the percentiles 0…100 (`step_advantages`): `q[k]` is the k-th
 * percentile, `n` the step's sample count.
 * @example advantagePercentiles(db, 1).get(3)?.q[50] // the step's median advantage
 */
export function advantagePercentiles(db: StoreDb, runId: number): Map<number, { n: number; q: number[] }> {
  const out = new Map<number, { n: number; q: number[] }>();
  // Plain rows (101 a step, ~10k at 100 steps): the query builder's row objects cost more than the query.
  const rows = db.$client
    .query("SELECT step, q, value, n FROM step_advantages WHERE run_id = ? ORDER BY step, q")
    .values(runId) as Array<[number, number, number, number]>;
  for (const [step, q, value, n] of rows) {
    let entry = out.get(step);
    if (!entry) {
      entry = { n, q: [] };
      out.set(step, entry);
    }
    entry.q[q] = value;
  }
  return out;
}

/**
 * The improvement per training episode as chart points `[episode index, improvement]`, at most `max` of them:
 * every episode in recording order while there are at most `max`, else one point per step (its mean, at the
 * mean index of its episodes), read from the totals.
 * @example improvementPoints(db, 1).at(-1);
 */
export function improvementPoints(db: StoreDb, runId: number, max = 1000): Array<[number, number]> {
  const perStep = db
    .select({ step: t.step, n: total(t.improvementN), sum: total(t.improvementSum) })
    .from(t)
    .where(train(runId))
    .groupBy(t.step)
    .orderBy(asc(t.step))
    .all()
    .filter((r) => r.n > 0);
  const count = perStep.reduce((a, r) => a + r.n, 0);
  if (count <= max) {
    // Served by the (run_id, improvement) index: only the rows that have one.
    return db
      .select({ improvement: trajectories.improvement })
      .from(trajectories)
      .where(
        and(
          eq(trajectories.runId, runId),
          isNotNull(trajectories.improvement),
          eq(trajectories.split, "train"),
          sql`${trajectories.status} != 'running'`,
        ),
      )
      .orderBy(asc(trajectories.id))
      .all()
      .map((r, i): [number, number] => [i, r.improvement ?? 0]);
  }
  let before = 0;
  return perStep.map((r) => {
    const point: [number, number] = [before + (r.n - 1) / 2, r.sum / r.n];
    before += r.n;
    return point;
  });
}
