/**
 * air metric names → the names prime-rl's W&B view uses, where prime-rl logs the same quantity. Read from
 * PrimeIntellect-ai/prime-rl at 559b44772e471d1538537b8805cc77f3824a5e64: orchestrator/orchestrator.py
 * (`time/step`, `time/wait_for_policy`, `progress/*`, `off_policy/*`, `step`), orchestrator/metrics.py (a trace
 * distribution `<name>/{mean,max,min,…}`, episode counts under `effective/`, `all/has_error/mean`),
 * trainer/rl/train.py (`loss/mean`, `entropy/all/mean`, `mismatch_kl/all/mean`, `optim/grad_norm`, `optim/lr`,
 * `perf/*`, `time/*`) and monitors/wandb/overview.py (the panels: `reward/mean`, `effective/num_turns/mean`, …).
 * prime-rl prefixes the rollout metrics with a scope (`train/agg/`); air logs one scope, so they stay bare.
 */
const EXACT: Record<string, string> = {
  "rollout/turns/mean": "effective/num_turns/mean",
  "rollout/turns/min": "effective/num_turns/min",
  "rollout/turns/max": "effective/num_turns/max",
  "rollout/completion_tokens/mean": "effective/num_output_tokens/mean",
  "rollout/completion_tokens/min": "effective/num_output_tokens/min",
  "rollout/completion_tokens/max": "effective/num_output_tokens/max",
  "rollout/count": "progress/rollouts",
  "off_policy/lag/mean": "off_policy/mean",
  "off_policy/lag/max": "off_policy/max",
  "time/step_s": "time/step",
  "time/train_wait_s": "time/wait_for_policy",
  "trainer/loss": "loss/mean",
  "trainer/entropy": "entropy/all/mean",
  "trainer/mismatch_kl": "mismatch_kl/all/mean",
  "trainer/grad_norm": "optim/grad_norm",
  "trainer/lr": "optim/lr",
};

/**
 * The W&B name of an air metric: prime-rl's name where it logs the same quantity, else air's own. Trainer
 * metrics that air passes through as `trainer/<prime-rl key>` get their prime-rl key back, except `time/` and
 * `progress/` keys, which would collide with the orchestrator's and keep the `trainer/` prefix.
 * @example wandbName("rollout/turns/mean") // "effective/num_turns/mean"
 * @example wandbName("trainer/perf/mfu") // "perf/mfu"
 * @example wandbName("group/zero_variance_frac") // "group/zero_variance_frac"
 */
export function wandbName(airName: string): string {
  const exact = EXACT[airName];
  if (exact) return exact;
  if (airName.startsWith("trainer/")) {
    const key = airName.slice("trainer/".length);
    if (!key.startsWith("time/") && !key.startsWith("progress/") && key.includes("/")) return key;
  }
  return airName;
}

/**
 * Renames a metrics map with `wandbName`, dropping values JSON cannot carry (NaN, ±Infinity).
 * @example wandbMetrics({ "time/step_s": 2 }) // { "time/step": 2 }
 */
export function wandbMetrics(metrics: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(metrics)) {
    if (Number.isFinite(value)) out[wandbName(key)] = value;
  }
  return out;
}

/**
 * Metrics derived per step that prime-rl logs and air has the parts of: the error rate over all rollouts and
 * the running totals.
 * @example derivedMetrics({ "rollout/count": 8, "rollout/failed": 2 }, { rollouts: 8 })
 * // { "all/has_error/mean": 0.25, "progress/total_rollouts": 8 }
 */
export function derivedMetrics(
  metrics: Record<string, number>,
  totals: { rollouts: number },
): Record<string, number> {
  const out: Record<string, number> = { "progress/total_rollouts": totals.rollouts };
  const count = metrics["rollout/count"];
  const failed = metrics["rollout/failed"];
  if (count !== undefined && failed !== undefined && count > 0) out["all/has_error/mean"] = failed / count;
  return out;
}
