/**
 * The file viewer's arithmetic, as MLGym's viewer does it. The viewer keeps a *current line* (MLGym's
 * CURRENT_LINE) that is the middle of the window, not its first line: the window shows the lines up to
 * `floor(current + window/2)`, the last `window` of them. Half windows may be fractional (odd windows), as
 * in MLGym, and only the printed numbers are rounded.
 */

/** Keeps the current line where a full window fits: at most `total - floor(window/2)`, at least `floor(window/2)`. */
export function constrainLine(line: number, total: number, window: number): number {
  const half = Math.floor(window / 2);
  return Math.max(Math.min(line, total - half), half);
}

/** The current line that shows `line` near the top of the window (a sixth of the window above it). */
export function focusLine(line: number, window: number): number {
  return Math.floor(Math.max(line + window / 2 - Math.floor(window / 6), 1));
}

/** The first and last line numbers (1-based, inclusive) the window shows; last < first when none. */
export function shownRange(line: number, total: number, window: number): [number, number] {
  const head = Math.min(total, Math.floor(Math.max(line + window / 2, window / 2)));
  return [Math.max(1, head - window + 1), head];
}

/**
 * The viewer's text for `lines` with the window centred on `line` (already constrained): a header, the
 * counts of lines above and below (as MLGym computes them, which can disagree with the lines shown by one),
 * and the numbered lines.
 * @example renderView("/w/a.py", ["x = 1"], 500, 1000) // "[File: /w/a.py (1 lines total)]\n1:x = 1"
 */
export function renderView(path: string, lines: string[], line: number, window: number): string {
  const total = lines.length;
  const out = [`[File: ${path} (${total} lines total)]`];
  const above = Math.floor(Math.max(0, line - window / 2));
  const below = Math.round(Math.max(0, total - line - window / 2));
  if (above > 0) out.push(`(${above} more lines above)`);
  const [first, last] = shownRange(line, total, window);
  for (let i = first; i <= last; i++) out.push(`${i}:${lines[i - 1]}`);
  if (below > 0) out.push(`(${below} more lines below)`);
  return out.join("\n");
}
