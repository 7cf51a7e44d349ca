import type { EvalRolloutRow } from "@air/logger-sqlite/read";

export type Point = [number, number];

/**
 * The unbiased pass@k estimate of Chen et al. (2021) for one example with `c` successes out of `n` samples:
 * 1 − C(n−c, k) / C(n, k), computed as a product so large n does not overflow.
 * @example passAtKEstimate(4, 1, 2) // 0.5
 */
export function passAtKEstimate(n: number, c: number, k: number): number {
  if (n - c < k) return 1;
  let miss = 1;
  for (let i = n - c + 1; i <= n; i++) miss *= 1 - k / i;
  return 1 - miss;
}

/** A periodic-evaluation rollout succeeds when it beat its task's baseline, or (no baseline) earned reward > 0. */
export function evalSuccess(r: EvalRolloutRow): boolean {
  if (r.status === "failed") return false;
  if (r.improvement !== null) return r.improvement > 0;
  return (r.reward ?? 0) > 0;
}

/**
 * pass@k over training steps from the periodic evaluations (`orchestrator.eval_every`): per eval step, the mean
 * over examples of the unbiased pass@k, for k = 1, 2, 4, … up to the fewest samples any example of that step
 * has. Keyed `pass@<k>`, x = the step after which the evaluation ran.
 * @example passAtKOverSteps(evalRollouts(db, 1))["pass@1"] // [[0, 0.25], [5, 0.5]]
 */
export function passAtKOverSteps(rows: EvalRolloutRow[]): Record<string, Point[]> {
  const steps = new Map<number, Map<string, { n: number; c: number }>>();
  for (const r of rows) {
    const examples = steps.get(r.step) ?? new Map<string, { n: number; c: number }>();
    const key = `${r.task}\u0000${r.exampleId}`;
    const o = examples.get(key) ?? { n: 0, c: 0 };
    o.n++;
    if (evalSuccess(r)) o.c++;
    examples.set(key, o);
    steps.set(r.step, examples);
  }
  const out: Record<string, Point[]> = {};
  for (const [step, examples] of [...steps.entries()].sort((a, b) => a[0] - b[0])) {
    const outcomes = [...examples.values()];
    const fewest = Math.min(...outcomes.map((o) => o.n));
    for (let k = 1; k <= fewest; k *= 2) {
      const mean = outcomes.reduce((a, o) => a + passAtKEstimate(o.n, o.c, k), 0) / outcomes.length;
      const list = out[`pass@${k}`] ?? [];
      list.push([step, mean]);
      out[`pass@${k}`] = list;
    }
  }
  return out;
}

/** The advantage distribution over steps: a histogram per step (columns) on shared bins, and quantile lines. */
export interface Heatmap {
  steps: number[];
  /** Bin edges, `bins + 1` of them, ascending. */
  edges: number[];
  /** `share[i][j]`: the share of step `steps[i]`'s samples in bin j. */
  share: number[][];
  /** Quantile lines by name (`p10`, `p50`, `p90`), one value per step. */
  quantiles: Record<string, number[]>;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * Bins every step's values (each list sorted ascending) on `bins` shared bins between the 1st and 99th
 * percentile of all values (the tails land in the outer bins), so one outlier does not flatten the picture.
 * @example advantageHeatmap(new Map([[0, [-1, 0, 1]]]), 4).share[0] // [0.333…, 0, 0.333…, 0.333…]
 */
export function advantageHeatmap(byStep: Map<number, number[]>, bins = 24): Heatmap {
  const steps = [...byStep.keys()].sort((a, b) => a - b);
  const all = steps.flatMap((s) => byStep.get(s)!).sort((a, b) => a - b);
  const edges = sharedEdges(quantile(all, 0.01), quantile(all, 0.99), bins);
  const lo = edges[0]!;
  const width = edges[1]! - lo;
  return heatmapOf(steps, edges, (step) => {
    const values = byStep.get(step)!;
    const counts = new Array<number>(bins).fill(0);
    for (const v of values) counts[Math.min(bins - 1, Math.max(0, Math.floor((v - lo) / width)))]!++;
    return {
      share: counts.map((n) => n / values.length),
      lines: [quantile(values, 0.1), quantile(values, 0.5), quantile(values, 0.9)],
    };
  });
}

/** `bins` equal bins from `lo` to `hi` (widened by ±0.5 when all values are equal): their `bins + 1` edges. */
function sharedEdges(lo: number, hi: number, bins: number): number[] {
  const [a, b] = hi > lo ? [lo, hi] : [lo - 0.5, hi + 0.5];
  const width = (b - a) / bins;
  return Array.from({ length: bins + 1 }, (_, i) => a + i * width);
}

/** A heatmap from each step's bin shares and its 10th, 50th and 90th percentile lines. */
function heatmapOf(
  steps: number[],
  edges: number[],
  row: (step: number) => { share: number[]; lines: [number, number, number] },
): Heatmap {
  const share: number[][] = [];
  const quantiles: Record<string, number[]> = { p10: [], p50: [], p90: [] };
  for (const step of steps) {
    const r = row(step);
    share.push(r.share);
    quantiles.p10!.push(r.lines[0]);
    quantiles.p50!.push(r.lines[1]);
    quantiles.p90!.push(r.lines[2]);
  }
  return { steps, edges, share, quantiles };
}

/** A step's advantages summarized as percentiles: `q[k]` is the k-th percentile (k = 0…100) of `n` values. */
export interface Percentiles {
  n: number;
  q: number[];
}

/** The share of a step's values below `x`, read off its percentiles (linear between them). */
function shareBelow(p: number[], x: number): number {
  const last = p.length - 1;
  if (x <= p[0]!) return 0;
  if (x > p[last]!) return 1;
  let k = 0;
  while (k < last && p[k + 1]! < x) k++;
  const lo = p[k]!;
  const hi = p[k + 1]!;
  return (k + (hi > lo ? (x - lo) / (hi - lo) : 1)) / last;
}

/**
 * `advantageHeatmap` from each step's percentiles instead of its values (what the store keeps per step, so the
 * run page reads 101 rows a step, not every sample): the shared bins span the 1st to 99th percentile of the
 * pooled percentiles (each weighted by its step's count), a bin's share is read off the step's percentiles, and
 * the quantile lines are the step's 10th, 50th and 90th percentiles. Shares are within about 1 percentage point
 * of `advantageHeatmap` over the values (tested).
 * @example percentileHeatmap(new Map([[0, { n: 3, q: percentilesOf([-1, 0, 1]) }]]), 4)
 */
export function percentileHeatmap(byStep: Map<number, Percentiles>, bins = 24): Heatmap {
  const steps = [...byStep.keys()].sort((a, b) => a - b);
  const pool = steps
    .flatMap((s) => {
      const { n, q } = byStep.get(s)!;
      return q.map((v) => [v, n / q.length] as const);
    })
    .sort((a, b) => a[0] - b[0]);
  const weight = pool.reduce((a, p) => a + p[1], 0);
  const at = (share: number): number => {
    let seen = 0;
    for (const [v, w] of pool) {
      seen += w;
      if (seen >= share * weight) return v;
    }
    return pool.at(-1)?.[0] ?? 0;
  };
  const edges = sharedEdges(at(0.01), at(0.99), bins);
  return heatmapOf(steps, edges, (step) => {
    const { q } = byStep.get(step)!;
    const below = edges.map((e, i) => (i === 0 ? 0 : i === bins ? 1 : shareBelow(q, e)));
    return {
      share: Array.from({ length: bins }, (_, j) => below[j + 1]! - below[j]!),
      lines: [q[10]!, q[50]!, q[90]!],
    };
  });
}

/**
 * The percentiles 0…100 of `values` (linear between the nearest ranks), as the store computes them per step.
 * @example percentilesOf([0, 10])[50] // 5
 */
export function percentilesOf(values: number[]): number[] {
  const sorted = [...values].sort((a, b) => a - b);
  return Array.from({ length: 101 }, (_, k) => quantile(sorted, k / 100));
}
