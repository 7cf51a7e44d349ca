import { seededRandom } from "@air/core";
/** Median, min, max and count of a list of repeated measurements. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

/**
 * The q-quantile (0..1) of `values` by linear interpolation between closest ranks; NaN for an empty list.
 * @example quantile([1, 2, 3, 4], 0.5) // 2.5
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  if (q < 0 || q > 1) throw new RangeError(`quantile ${q} is outside [0, 1]`);
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
}

/**
 * Median with min and max: how repeats of one measurement are reported.
 * @example spread([3, 1, 2]) // { median: 2, min: 1, max: 3, n: 3 }
 */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { median: quantile(values, 0.5), min, max, n: values.length };
}

/**
 * Formats a number with `digits` significant digits, dropping noise on large values; integers stay integers.
 * @example fmt(1234.567) // "1235"; fmt(0.01234) // "0.0123"; fmt(16) // "16"
 */
export function fmt(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs === 0) return "0";
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(abs)));
  return value.toFixed(Math.min(decimals, 6));
}

/**
 * "median (min–max)" of a spread, for table cells.
 * @example fmtSpread({ median: 2, min: 1, max: 3, n: 3 }) // "2 (1–3)"
 */
export function fmtSpread(s: Spread, digits = 3): string {
  if (s.n <= 1) return fmt(s.median, digits);
  return `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
}

/**
 * A table row of one measured series: its label, how many samples, and "median (min–max)".
 * @example spreadRow("warm ÷ cold", [0.01, 0.02, 0.03]) // ["warm ÷ cold", "3", "0.02 (0.01–0.03)"]
 */
export function spreadRow(label: string, values: readonly number[]): string[] {
  return [label, String(values.length), fmtSpread(spread(values))];
}

/** The repo's one seeded RNG (mulberry32), from `@air/core`. */
export { seededRandom };
