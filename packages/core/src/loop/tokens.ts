import type { Turn } from "../types.ts";

/**
 * A rollout's token sequence held once: one growing Int32Array of which each turn's `promptTokenIds` and
 * `completionTokenIds` are views. Turn k+1's prompt usually starts with turn k's prompt and completion (a chat
 * template re-renders the history the same way), so only its new tokens are written; a prompt that does not
 * extend the sequence (history elided, the template re-rendered a reply differently) starts a new sequence
 * with a copy of it. The server's id arrays are read, not kept: a turn costs 4 bytes per new token, not
 * 8 bytes per token of its whole prompt. The turns' completion logprobs likewise share one growing
 * Float32Array (`appendLogprobs`).
 * @example
 * const log = new TokenLog();
 * const ids = log.append(generation.promptTokenIds, generation.completionTokenIds, trajectory.turns);
 * turn.promptTokenIds = ids.prompt; turn.completionTokenIds = ids.completion;
 */
export class TokenLog {
  private data = new Int32Array(0);
  private length = 0;
  /** Every turn's completion logprobs back to back (4-byte floats); each turn's are a view. */
  private logprobs = new Float32Array(0);
  private logprobCount = 0;

  /** Tokens in the current sequence. */
  get size(): number {
    return this.length;
  }

  /** Bytes allocated for the current sequence. */
  get capacityBytes(): number {
    return this.data.byteLength;
  }

  /**
   * Writes `prompt` + `completion` as the sequence's next tokens and returns views of both. `turns` are the
   * rollout's earlier turns: when the buffer grows, their views over it are moved to the new one.
   */
  append(
    prompt: ArrayLike<number>,
    completion: ArrayLike<number>,
    turns: Turn[],
  ): { prompt: Int32Array; completion: Int32Array } {
    if (!this.extends(prompt)) this.restart();
    const end = prompt.length + completion.length;
    if (end > this.data.length) this.grow(end, turns);
    const data = this.data;
    for (let i = this.length; i < prompt.length; i++) data[i] = prompt[i] as number;
    for (let i = 0; i < completion.length; i++) data[prompt.length + i] = completion[i] as number;
    this.length = end;
    return { prompt: data.subarray(0, prompt.length), completion: data.subarray(prompt.length, end) };
  }

  /**
   * Writes one turn's completion logprobs after the earlier turns' and returns a view of them (one buffer per
   * rollout instead of a small one per turn). When the buffer grows, `turns`' logprob views move to the new one.
   */
  appendLogprobs(logprobs: ArrayLike<number>, turns: Turn[]): Float32Array {
    const start = this.logprobCount;
    const end = start + logprobs.length;
    if (end > this.logprobs.length) this.resizeLogprobs(Math.ceil(end * 1.125) + 64, turns);
    const data = this.logprobs;
    for (let i = 0; i < logprobs.length; i++) data[start + i] = logprobs[i] as number;
    this.logprobCount = end;
    return data.subarray(start, end);
  }

  /**
   * Drops the unused capacity (a finished rollout waiting for its batch); `turns`' views move to the new buffer.
   */
  trim(turns: Turn[]): void {
    if (this.data.length > this.length) this.resize(this.length, turns);
    if (this.logprobs.length > this.logprobCount) this.resizeLogprobs(this.logprobCount, turns);
  }

  /** Whether `prompt` starts with the whole sequence so far. */
  private extends(prompt: ArrayLike<number>): boolean {
    if (prompt.length < this.length) return false;
    const data = this.data;
    for (let i = 0; i < this.length; i++) if (data[i] !== prompt[i]) return false;
    return true;
  }

  /** A new, empty sequence; the old buffer stays with the turns that view it. */
  private restart(): void {
    this.data = new Int32Array(0);
    this.length = 0;
  }

  /**
   * Room for `needed` tokens and about two more turns like this one (a turn adds its new prompt part and its
   * completion), at least 256: a rollout holds little spare capacity while it runs and is copied every other turn.
   * A new sequence gets just 256 more (it may not be extended: history elision starts one each turn).
   */
  private grow(needed: number, turns: Turn[]): void {
    const turnSize = this.length === 0 ? 0 : needed - this.length;
    this.resize(needed + Math.max(256, 2 * turnSize), turns);
  }

  private resize(capacity: number, turns: Turn[]): void {
    const old = this.data;
    const next = new Int32Array(capacity);
    next.set(old.subarray(0, this.length));
    this.data = next;
    if (old.length === 0) return;
    for (const turn of turns) {
      turn.promptTokenIds = moved(turn.promptTokenIds, old, next);
      turn.completionTokenIds = moved(turn.completionTokenIds, old, next);
    }
  }

  /** The logprob buffer at `capacity`; `turns`' logprob views move to it. */
  private resizeLogprobs(capacity: number, turns: Turn[]): void {
    const old = this.logprobs;
    const next = new Float32Array(capacity);
    next.set(old.subarray(0, this.logprobCount));
    this.logprobs = next;
    if (old.length === 0) return;
    for (const turn of turns) turn.completionLogprobs = moved(turn.completionLogprobs, old, next);
  }
}

/** `view` re-pointed from `old` to `next` when it is a view of `old`; else unchanged. */
function moved<T extends ArrayLike<number>, A extends Int32Array | Float32Array>(
  view: T,
  old: A,
  next: A,
): T | A {
  if (!ArrayBuffer.isView(view) || view.buffer !== old.buffer) return view;
  const start = view.byteOffset / old.BYTES_PER_ELEMENT;
  return next.subarray(start, start + view.length) as A;
}
