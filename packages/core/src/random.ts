/**
 * A seeded pseudo-random generator (mulberry32) returning floats in [0, 1): the same seed gives the same
 * sequence on every machine. The one seeded RNG of the repo: dataset splits, simulations and tests use it.
 * @example
 * const rand = seededRandom(7);
 * const x = rand(); // 0 <= x < 1, the same every time for seed 7
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
