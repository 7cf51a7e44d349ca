import { seededRandom } from "@air/core";

/** The repo's one seeded RNG (mulberry32), from `@air/core`. */
export { seededRandom };

/**
 * A Fisher–Yates shuffled copy of `items`, deterministic for a seed.
 * @example shuffled([1, 2, 3], 0) // same order every time for seed 0
 */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const rand = seededRandom(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export interface SplitOptions {
  /** Fraction of rows held out for eval when there is no separate eval file. */
  evalFraction: number;
  seed: number;
  shuffle: boolean;
}

/**
 * Splits one list of rows into train and eval: shuffled (when asked) with `seed`, the first
 * `round(evalFraction × n)` rows go to eval. The split does not depend on how many examples are used later.
 * @example splitRows(rows, { evalFraction: 0.2, seed: 0, shuffle: true })
 */
export function splitRows<T>(rows: readonly T[], options: SplitOptions): { train: T[]; eval: T[] } {
  const order = options.shuffle ? shuffled(rows, options.seed) : [...rows];
  const held = Math.round(options.evalFraction * order.length);
  return { eval: order.slice(0, held), train: order.slice(held) };
}

/**
 * The first `limit` items, or all of them for a negative or missing limit.
 * @example take([1, 2, 3], 2) // [1, 2]
 */
export function take<T>(items: T[], limit: number | undefined): T[] {
  return limit === undefined || limit < 0 ? items : items.slice(0, limit);
}
