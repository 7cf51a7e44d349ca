import { EVALUATION_NOISE_PROBE } from "@air/logger-sqlite/read";
import { meanStd } from "./analysis.ts";
import type { TaskFacts } from "./facts.ts";
import { priorityScore } from "./scores.ts";
import type { Finding, ProbeRun } from "./types.ts";

const fmt = (x: number) => Number(x.toPrecision(4)).toString();

/**
 * The task's evaluation noise: the (sample) standard deviation of the priority metric over the baseline's
 * repeats (`--repeats N`), stored as the finding's `score` so readers (`readEvaluationNoise`: the dashboard's
 * score band, reward-delta's `min_improvement = "noise"`) find it in the run store. `n/a` with fewer than two
 * scored repeats.
 * @example noiseFinding(facts, baselineRuns) // { probe: "evaluation noise", verdict: "ok", score: 0.012, ... }
 */
export function noiseFinding(facts: TaskFacts, runs: ProbeRun[]): Omit<Finding, "task"> {
  const metric = facts.task.priorityMetric;
  const scores = runs
    .map((r) => priorityScore(facts, r.turns.at(-1)?.scores))
    .filter((s): s is number => s !== undefined);
  const base = { probe: EVALUATION_NOISE_PROBE, group: "baseline" as const, critical: false };
  if (scores.length < 2)
    return {
      ...base,
      verdict: "n/a",
      evidence: `${scores.length} scored baseline repeat(s): the noise needs --repeats 2 or more with a runnable baseline`,
    };
  const { mean, std } = meanStd(scores);
  return {
    ...base,
    verdict: "ok",
    score: std,
    evidence: `std ${fmt(std)} of ${metric} over ${scores.length} baseline evaluations (mean ${fmt(mean)}); improvements below it are noise (reward-delta min_improvement = "noise")`,
  };
}
