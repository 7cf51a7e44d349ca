import { lookupMetric } from "@air/env-mlgym";
import { metricRange } from "@air/reward-delta";
import type { TaskFacts } from "./facts.ts";

/** The task's priority metric value in `scores` (case-insensitive), if any. */
export function priorityScore(
  facts: TaskFacts,
  scores: Record<string, number> | undefined,
): number | undefined {
  if (!scores) return undefined;
  const v = lookupMetric(scores, facts.task.priorityMetric);
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** Whether `score` is at least as good as the YAML baseline (false without a baseline). */
export function reachesBaseline(facts: TaskFacts, score: number): boolean {
  const base = lookupMetric(facts.task.baselineScores, facts.task.priorityMetric);
  if (base === undefined) return false;
  const minimize = lookupMetric(facts.task.directions, facts.task.priorityMetric) === "minimize";
  return minimize ? score <= base + 1e-12 : score >= base - 1e-12;
}

/** Whether `score` is the best value the priority metric can take (accuracy 1, r2 1, rmse 0). */
export function perfectScore(facts: TaskFacts, score: number): boolean {
  const metric = facts.task.priorityMetric;
  const range = metricRange(metric);
  const minimize = lookupMetric(facts.task.directions, metric) === "minimize";
  if (!range) return false;
  return minimize
    ? range.min !== undefined && score <= range.min + 1e-9
    : range.max !== undefined && score >= range.max - 1e-9;
}
