/** Where a replayed observation first differs from the stored one. */
export interface Divergence {
  /** 0-based turn index. */
  turn: number;
  /** 1-based line of the observation where they first differ. */
  line: number;
  stored: string;
  replayed: string;
}

const clip = (text: string, max = 200) => (text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * The first turn whose replayed observation differs from the stored one, with the first differing line of
 * each (clipped to 200 characters; "(end)" where one side has no more lines); null when all match. A replay
 * that stopped early diverges at its first missing turn.
 * @example firstDivergence(["a\nb"], ["a\nc"]) // → { turn: 0, line: 2, stored: "b", replayed: "c" }
 */
export function firstDivergence(stored: string[], replayed: string[]): Divergence | null {
  for (let turn = 0; turn < stored.length; turn++) {
    const a = stored[turn]!;
    const b = replayed[turn];
    if (b === undefined)
      return { turn, line: 1, stored: clip(a.split("\n")[0] ?? ""), replayed: "(no turn)" };
    if (a === b) continue;
    const la = a.split("\n");
    const lb = b.split("\n");
    let i = 0;
    while (i < la.length && i < lb.length && la[i] === lb[i]) i++;
    return { turn, line: i + 1, stored: clip(la[i] ?? "(end)"), replayed: clip(lb[i] ?? "(end)") };
  }
  if (replayed.length > stored.length) {
    const turn = stored.length;
    return { turn, line: 1, stored: "(no turn)", replayed: clip(replayed[turn]!.split("\n")[0] ?? "") };
  }
  return null;
}

/** Mean, population standard deviation, min and max of the finite values (null figures when none). */
export function spread(values: Array<number | null>): {
  n: number;
  mean: number | null;
  std: number | null;
  min: number | null;
  max: number | null;
} {
  const xs = values.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  if (xs.length === 0) return { n: 0, mean: null, std: null, min: null, max: null };
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const min = Math.min(...xs);
  const max = Math.max(...xs);
  // Equal values have no spread (the mean of three equal floats can be off in its last bit).
  const std = min === max ? 0 : Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
  return { n: xs.length, mean: min === max ? min : mean, std, min, max };
}
