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

/**
 * Why `value` cannot be a score of `metric` (outside its plausible range), or undefined when it can.
 * @example impossibleScore("r2", 1.3) // "r2 = 1.3 is impossible (r2 is at most 1)"
 */
export function impossibleScore(metric: string, value: number): string | undefined {
  const range = metricRange(metric);
  if (!range) return undefined;
  const tolerance = 1e-9;
  const low = range.min !== undefined && value < range.min - tolerance;
  const high = range.max !== undefined && value > range.max + tolerance;
  return low || high ? `${metric} = ${value} is impossible (${metric} is ${range.what})` : undefined;
}
