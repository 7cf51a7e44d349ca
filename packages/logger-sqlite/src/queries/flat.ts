import { and, countDistinct, desc, eq, inArray } from "drizzle-orm";
import type { StoreDb } from "../open.ts";
import { metrics, trajectories, turns, warnings } from "../schema.ts";
import { timedOut, training } from "./series.ts";

/** The step metrics that explain a flat reward (every advantage 0). */
export const FLAT_REWARD_METRICS = [
  "reward/mean",
  "reward/std",
  "rollout/no_score_frac",
  "group/zero_variance_frac",
  "rollout/parse_error_frac",
  "rollout/tool_error_frac",
  "rollout/evaluation_error_frac",
  "rollout/failed",
  "rollout/count",
  "batch/samples",
  "batch/zero_advantage_dropped_frac",
  "rollout/max_turns_frac",
  "rollout/no_turn_frac",
  "rollout/timeouts",
];

/**
 * Per step (the last `limit` steps with metrics, newest first): the flat-reward metrics, the count of rollouts
 * with a timed-out command, and the step's warnings. Runs recorded since core counts timeouts carry the
 * `rollout/timeouts` metric; older or imported runs are scanned for timed-out tool errors instead.
 * @example for (const r of flatRewardRows(db, 1)) console.log(r.step, r.metrics["reward/std"], r.timeouts);
 */
export function flatRewardRows(db: StoreDb, runId: number, limit = 50) {
  const lastSteps = db
    .selectDistinct({ step: metrics.step })
    .from(metrics)
    .where(eq(metrics.runId, runId))
    .orderBy(desc(metrics.step))
    .limit(limit);
  const series = db
    .select({ step: metrics.step, name: metrics.name, value: metrics.value })
    .from(metrics)
    .where(
      and(
        eq(metrics.runId, runId),
        eq(metrics.source, "step"),
        inArray(metrics.name, FLAT_REWARD_METRICS),
        inArray(metrics.step, lastSteps),
      ),
    )
    .all();
  const counted = series.some((r) => r.name === "rollout/timeouts");
  const timeouts = counted
    ? series.filter((r) => r.name === "rollout/timeouts").map((r) => ({ step: r.step, n: r.value }))
    : db
        .select({ step: trajectories.step, n: countDistinct(trajectories.rolloutId) })
        .from(turns)
        .innerJoin(
          trajectories,
          and(eq(trajectories.runId, turns.runId), eq(trajectories.rolloutId, turns.rolloutId)),
        )
        .where(and(eq(turns.runId, runId), training, timedOut(turns.toolError)))
        .groupBy(trajectories.step)
        .all();
  const warned = db
    .select()
    .from(warnings)
    .where(eq(warnings.runId, runId))
    .orderBy(desc(warnings.step))
    .all();
  const bySteps = new Map<number, Record<string, number>>();
  for (const r of series) {
    const m = bySteps.get(r.step) ?? {};
    m[r.name] = r.value;
    bySteps.set(r.step, m);
  }
  return [...bySteps.entries()]
    .sort((a, b) => b[0] - a[0])
    .map(([step, m]) => ({
      step,
      metrics: m,
      timeouts: timeouts.find((t) => t.step === step)?.n ?? 0,
      warnings: warned.filter((w) => w.step === step).map((w) => w.message),
    }));
}
export type FlatRewardRow = ReturnType<typeof flatRewardRows>[number];
