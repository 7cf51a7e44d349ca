/**
 * prime-rl's `balanced_partition` (`trainer/batch.py`): Karmarkar–Karp largest differencing over `k` sets,
 * then pairwise swaps while they lower (max load, spread). Ported step for step, including Python's heapq
 * sift order and `sort(reverse=True)` stability, so the same micro batches land on the same data rank.
 */

interface WeightedSet {
  total: number;
  items: number[];
}

function listLess(a: number[], b: number[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return (a[i] ?? 0) < (b[i] ?? 0);
  }
  return a.length < b.length;
}

/** `_WeightedSet.__lt__`. */
function setLess(a: WeightedSet, b: WeightedSet): boolean {
  return a.total !== b.total ? a.total < b.total : listLess(a.items, b.items);
}

/** `list.sort(reverse=True)` with `__lt__`: descending, equal elements keep their order. */
function sortDescending(sets: WeightedSet[]): void {
  sets.sort((a, b) => (setLess(b, a) ? -1 : setLess(a, b) ? 1 : 0));
}

class KKState {
  sets: WeightedSet[];
  constructor(items: [number, number][], k: number) {
    this.sets = Array.from({ length: k }, () => ({ total: 0, items: [] as number[] }));
    items.forEach(([idx, weight], i) => {
      const set = this.sets[i] as WeightedSet;
      set.items.push(idx);
      set.total += weight;
    });
    sortDescending(this.sets);
  }
  get spread(): number {
    return (this.sets[0] as WeightedSet).total - (this.sets[this.sets.length - 1] as WeightedSet).total;
  }
  merge(other: KKState): void {
    const k = this.sets.length;
    for (let i = 0; i < k; i++) {
      const mine = this.sets[i] as WeightedSet;
      const theirs = other.sets[k - 1 - i] as WeightedSet;
      mine.items.push(...theirs.items);
      mine.total += theirs.total;
    }
    sortDescending(this.sets);
  }
  /** `_KKState.__lt__`: the larger spread first; `a > b` on sets is `b < a`. */
  less(other: KKState): boolean {
    if (this.spread !== other.spread) return this.spread > other.spread;
    return setLess(other.sets[0] as WeightedSet, this.sets[0] as WeightedSet);
  }
}

// Python's heapq (_siftdown / _siftup), so ties pop in the same order.
function siftDown(heap: KKState[], start: number, pos: number): void {
  const item = heap[pos] as KKState;
  while (pos > start) {
    const parentPos = (pos - 1) >> 1;
    const parent = heap[parentPos] as KKState;
    if (item.less(parent)) {
      heap[pos] = parent;
      pos = parentPos;
      continue;
    }
    break;
  }
  heap[pos] = item;
}

function siftUp(heap: KKState[], pos: number): void {
  const end = heap.length;
  const start = pos;
  const item = heap[pos] as KKState;
  let child = 2 * pos + 1;
  while (child < end) {
    const right = child + 1;
    if (right < end && !(heap[child] as KKState).less(heap[right] as KKState)) child = right;
    heap[pos] = heap[child] as KKState;
    pos = child;
    child = 2 * pos + 1;
  }
  heap[pos] = item;
  siftDown(heap, start, pos);
}

function heapPush(heap: KKState[], item: KKState): void {
  heap.push(item);
  siftDown(heap, 0, heap.length - 1);
}

function heapPop(heap: KKState[]): KKState {
  const last = heap.pop() as KKState;
  if (heap.length === 0) return last;
  const top = heap[0] as KKState;
  heap[0] = last;
  siftUp(heap, 0);
  return top;
}

function karmarkarKarp(weights: number[], k: number): number[][] {
  const sorted = weights.map((w, i) => [w, i] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const states: KKState[] = [];
  for (let offset = 0; offset < sorted.length; offset += k) {
    const items = sorted.slice(offset, offset + k).map(([w, i]) => [i, w] as [number, number]);
    heapPush(states, new KKState(items, k));
  }
  while (states.length > 1) {
    const state = heapPop(states);
    state.merge(heapPop(states));
    heapPush(states, state);
  }
  return (states[0] as KKState).sets.map((s) => [...s.items].sort((a, b) => a - b));
}

function scoreLess(a: [number, number], b: [number, number]): boolean {
  return a[0] !== b[0] ? a[0] < b[0] : a[1] < b[1];
}

function refineBySwapping(weights: number[], partitions: number[][]): number[][] {
  const parts = partitions.map((p) => [...p]);
  let loads = parts.map((p) => p.reduce((n, i) => n + (weights[i] ?? 0), 0));
  const w = (i: number) => weights[i] ?? 0;
  for (;;) {
    let best: [number, number, number, number, number[]] | undefined;
    let bestScore: [number, number] = [Math.max(...loads), Math.max(...loads) - Math.min(...loads)];
    for (let l = 0; l < parts.length; l++) {
      for (let r = l + 1; r < parts.length; r++) {
        const left = parts[l] as number[];
        const right = parts[r] as number[];
        for (let lp = 0; lp < left.length; lp++) {
          for (let rp = 0; rp < right.length; rp++) {
            const li = left[lp] as number;
            const ri = right[rp] as number;
            const next = [...loads];
            next[l] = (loads[l] ?? 0) - w(li) + w(ri);
            next[r] = (loads[r] ?? 0) - w(ri) + w(li);
            const score: [number, number] = [Math.max(...next), Math.max(...next) - Math.min(...next)];
            if (scoreLess(score, bestScore)) {
              bestScore = score;
              best = [l, r, lp, rp, next];
            }
          }
        }
      }
    }
    if (!best) return parts;
    const [l, r, lp, rp, next] = best;
    loads = next;
    const left = parts[l] as number[];
    const right = parts[r] as number[];
    [left[lp], right[rp]] = [right[rp] as number, left[lp] as number];
  }
}

/**
 * Splits item indices into `k` groups of near-equal total weight; `weights.length` must be a positive
 * multiple of `k` (prime-rl pads with dummy micro batches first).
 * @example balancedPartition([5, 1, 4, 2], 2) // [[2, 3], [0, 1]]: loads 6 and 6, as prime-rl's balanced_partition
 */
export function balancedPartition(weights: number[], k: number): number[][] {
  if (weights.length < k || weights.length % k !== 0)
    throw new RangeError(`${weights.length} items do not split evenly over ${k} ranks`);
  return refineBySwapping(weights, karmarkarKarp(weights, k));
}
