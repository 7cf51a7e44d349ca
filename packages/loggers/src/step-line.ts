import type { EventPayload } from "@air/core";

const fmt = (x: number | undefined, digits = 3) =>
  x === undefined || !Number.isFinite(x) ? "-" : x.toFixed(digits);
const pct = (x: number | undefined) => (x === undefined ? "-" : `${Math.round(x * 100)}%`);

/** What a step line shows besides the step's own metrics. */
export interface StepLineExtras {
  /** `run.max_steps`, to show `(done/total)`. */
  totalSteps?: number;
  /** Wall time of the step, shown when the metrics have no `time/step_s` (the time since the previous step's line). */
  seconds: number;
  /** The trainer's loss from the last weights update (it arrives after the step's line). */
  lastLoss?: number;
  /** Error log lines since the previous step. */
  errorLogs?: number;
}

/**
 * The one line printed per step, by the console logger or the launcher's progress view. Every count is read
 * from the step's metrics, the numbers the store keeps for the step (`reward/*`, `rollout/count`,
 * `rollout/failed`, `batch/samples`, `rollout/turns/mean`, the flat-reward causes, `time/step_s`); warnings are counted, not
 * repeated (the run's log prints each once).
 * @example
 * formatStepLine(e, { totalSteps: 10, seconds: 4.2 })
 * // "step 3 (4/10) | reward 0.500 [0.00, 1.00] | rollouts 7 ok / 1 failed | samples 24 | turns 2.5 | …"
 */
export function formatStepLine(e: EventPayload<"step:end">, extras: StepLineExtras): string {
  const m = e.metrics;
  const count = m["rollout/count"] ?? e.trajectories.length;
  const failed = m["rollout/failed"] ?? e.trajectories.filter((t) => t.stopReason === "failed").length;
  const of = extras.totalSteps ? ` (${e.step + 1}/${extras.totalSteps})` : "";
  // Tree rollouts: the trajectories are nodes (segments of a path); a rollout is a leaf's path, so the reward
  // is the leaves' and no-score counts leaves whose path never scored.
  const tree = m["tree/leaves"] !== undefined;
  const parts = [
    `step ${e.step}${of}`,
    `reward ${fmt(tree ? m["tree/leaf_reward/mean"] : m["reward/mean"])} [${fmt(m["reward/min"], 2)}, ${fmt(m["reward/max"], 2)}]`,
    tree
      ? `nodes ${count - failed} ok / ${failed} failed (${m["tree/leaves"]} leaves)`
      : `rollouts ${count - failed} ok / ${failed} failed`,
    `samples ${m["batch/samples"] ?? e.batch.samples.length}`,
    `${tree ? "turns/node" : "turns"} ${fmt(m["rollout/turns/mean"], 1)}`,
  ];
  // A rate the run cannot produce is not in the metrics (a dataset env reports no scores; parser "none" never
  // fails to parse), so its column is left out rather than shown as 0% or 100%.
  const noScore = tree
    ? (m["tree/leaf_no_score_frac"] ?? m["rollout/no_score_frac"])
    : m["rollout/no_score_frac"];
  if (m["rollout/no_score_frac"] !== undefined) parts.push(`no-score ${pct(noScore)}`);
  if (m["rollout/parse_error_frac"] !== undefined)
    parts.push(`parse-err ${pct(m["rollout/parse_error_frac"])}`);
  parts.push(`zero-var ${pct(m["group/zero_variance_frac"])}`);
  const rate = m["throughput/turns_per_s"];
  // The loop leaves the rate out when the step's time is too short to divide by: "–", not a huge number.
  if (rate !== undefined) parts.push(`turns/s ${fmt(rate, 1)}`);
  else if (m["time/step_s"] !== undefined) parts.push("turns/s –");
  if (extras.lastLoss !== undefined) parts.push(`last loss ${fmt(extras.lastLoss, 4)}`);
  if (e.warnings.length) parts.push(`${e.warnings.length} warning${e.warnings.length === 1 ? "" : "s"}`);
  if (extras.errorLogs) parts.push(`${extras.errorLogs} error log${extras.errorLogs === 1 ? "" : "s"}`);
  parts.push(`${fmt(m["time/step_s"] ?? extras.seconds, 1)}s`);
  return parts.join(" | ");
}

/**
 * The line printed after a periodic evaluation (`eval_every`): the eval split's reward, rollouts ok/failed,
 * no-score where the env reports scores, and the eval's own time (not counted in the next step's).
 * @example formatEvalLine(e) // "eval after step 3 | reward 0.450 | rollouts 40 ok / 0 failed | 2.1s"
 */
export function formatEvalLine(e: EventPayload<"eval:end">): string {
  const m = e.metrics;
  const failed = m["eval/failed"] ?? 0;
  const parts = [
    `eval after step ${e.step}`,
    `reward ${fmt(m["eval/reward/mean"])}`,
    `rollouts ${(m["eval/rollouts"] ?? e.trajectories.length) - failed} ok / ${failed} failed`,
  ];
  if (m["eval/no_score_frac"] !== undefined) parts.push(`no-score ${pct(m["eval/no_score_frac"])}`);
  parts.push(`${fmt(m["eval/time_s"], 1)}s`);
  return parts.join(" | ");
}

/** The trainer's loss in a `weights:updated` payload: air's name (`trainer/loss`) or a bare `loss`. */
export function lossOf(metrics: Record<string, number>): number | undefined {
  return metrics["trainer/loss"] ?? metrics.loss;
}
