/** The values a metric can take: `[min, max]`, either end open when undefined. */
export interface MetricRange {
  min?: number;
  max?: number;
  /** Why, for messages: "a fraction", "at most 1", "never negative". */
  what: string;
}

const FRACTION: MetricRange = { min: 0, max: 1, what: "a fraction in [0, 1]" };
const AT_MOST_ONE: MetricRange = { max: 1, what: "at most 1" };
const NON_NEGATIVE: MetricRange = { min: 0, what: "never negative" };

/** Normalised name (lower case, separators dropped) → range. */
const RANGES: Record<string, MetricRange> = {
  accuracy: FRACTION,
  acc: FRACTION,
  balancedaccuracy: FRACTION,
  precision: FRACTION,
  recall: FRACTION,
  f1: FRACTION,
  f1score: FRACTION,
  auc: FRACTION,
  rocauc: FRACTION,
  r2: AT_MOST_ONE,
  r2score: AT_MOST_ONE,
  rmse: NON_NEGATIVE,
  mse: NON_NEGATIVE,
  mae: NON_NEGATIVE,
  rmsle: NON_NEGATIVE,
  logloss: NON_NEGATIVE,
  perplexity: { min: 1, what: "at least 1" },
};

const normalise = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, "");

/**
 * The plausible range of a metric known by name (accuracy-like fractions, r2 ≤ 1, error metrics ≥ 0, also with a
 * `val_`/`test_` prefix), else undefined (a game's `Score` has no range).
 * @example metricRange("Accuracy") // { min: 0, max: 1, what: "a fraction in [0, 1]" }
 */
export function metricRange(metric: string): MetricRange | undefined {
  const name = normalise(metric);
  return RANGES[name] ?? RANGES[name.replace(/^(val|valid|validation|test|eval)/, "")];
}

/** `ranges[metric]` (ignoring case) as a `MetricRange`, when the task declares one. */
function declaredRange(
  ranges: Record<string, { min?: number; max?: number }> | undefined,
  metric: string,
): MetricRange | undefined {
  if (!ranges) return undefined;
  const key =
    Object.keys(ranges).find((k) => k === metric) ??
    Object.keys(ranges).find((k) => k.toLowerCase() === metric.toLowerCase());
  const r = key === undefined ? undefined : ranges[key];
  if (!r || (r.min === undefined && r.max === undefined)) return undefined;
  return { ...r, what: `in [${r.min ?? "-inf"}, ${r.max ?? "inf"}] for this task` };
}

/**
 * Why `value` cannot be a score of `metric` (outside the task's declared range, `ScoreSpec.ranges`, else the
 * metric's plausible range by name), or undefined when it can.
 * @example impossibleScore("r2", 1.3) // "r2 = 1.3 is impossible (r2 is at most 1)"
 * @example impossibleScore("Score", 9, { Score: { min: 0, max: 2 } }) // "Score = 9 is impossible (Score is in [0, 2] for this task)"
 */
export function impossibleScore(
  metric: string,
  value: number,
  ranges?: Record<string, { min?: number; max?: number }>,
): string | undefined {
  const range = declaredRange(ranges, metric) ?? metricRange(metric);
  if (!range) return undefined;
  const tolerance = 1e-9;
  const low = range.min !== undefined && value < range.min - tolerance;
  const high = range.max !== undefined && value > range.max + tolerance;
  return low || high ? `${metric} = ${value} is impossible (${metric} is ${range.what})` : undefined;
}
