import type { GenerateRequest, Message } from "@air/core";

/**
 * Reading a chat answer's `prompt_token_ids` without re-parsing the part the policy has already read.
 *
 * vLLM (`return_token_ids`) and SGLang send every prompt id of every turn, so at long contexts most of an answer
 * is a list the orchestrator read the turn before: turn k+1's prompt starts with turn k's prompt. The policy keeps
 * a small cursor per rollout (the length and a 64-bit hash of the last prompt's list text, and its id count;
 * the ids themselves stay in the loop's `TokenLog`) and hands it back with the next request. When the new list's
 * text starts with that text (same length prefix, same hash, then a comma), only the new ids after it are
 * parsed and the earlier ones are copied from the previous prompt's ids; otherwise the whole answer is parsed as
 * before. Either way the caller gets the same ids.
 */

/**
 * What the policy remembers of a rollout's last prompt-id list: its text length, text hash, id count; and, set by
 * the policy, how many messages that prompt had and its last message (`promptBound`).
 */
export interface PromptCursor {
  readonly textLength: number;
  readonly hash: bigint | number;
  readonly count: number;
  readonly messages?: number;
  readonly lastMessage?: Message;
}

/** The previous turn's prompt ids and the cursor read with them (`GenerateRequest.previousPrompt`). */
export interface PromptHint {
  ids: ArrayLike<number>;
  cursor: PromptCursor;
}

/**
 * The request's previous prompt as a hint for reading the answer, when its cursor is one this policy made.
 * @example const hint = hintOf(request.previousPrompt);
 */
export function hintOf(previous: GenerateRequest["previousPrompt"]): PromptHint | undefined {
  const c = previous?.cursor as Partial<PromptCursor> | undefined;
  if (previous === undefined || typeof c?.textLength !== "number" || typeof c.count !== "number")
    return undefined;
  if (typeof c.hash !== "bigint" && typeof c.hash !== "number") return undefined;
  return { ids: previous.ids, cursor: c as PromptCursor };
}

const KEY = '"prompt_token_ids":[';
/** Stands where the list was while the rest of the answer is parsed; no server sends it. */
const SENTINEL = "\u0000air:prompt_token_ids";
const SENTINEL_JSON = JSON.stringify(SENTINEL);

/**
 * Parses a chat completion answer. With a `hint` whose cursor matches the answer's prompt-id list, the list is
 * read as the hint's ids plus the ids after them; the answer then carries the list as a number[] exactly where
 * the server put it (top level for vLLM, `choices[0]` for SGLang). Returns the parsed answer and the cursor of
 * its prompt-id list (undefined when it has none). Throws as JSON.parse does on malformed text.
 * @example const { answer, cursor } = parseChatAnswer(text, hint);
 */
export function parseChatAnswer(text: string, hint?: PromptHint): { answer: unknown; cursor?: PromptCursor } {
  const open = keyAt(text);
  if (open < 0) return { answer: JSON.parse(text) };
  const close = text.indexOf("]", open);
  if (close < 0) return { answer: JSON.parse(text) };
  const list = text.slice(open + 1, close);
  const cursor: PromptCursor = { textLength: list.length, hash: Bun.hash(list), count: 0 };
  const known = hint !== undefined && extendsHint(list, hint) ? hint : undefined;
  if (known === undefined) {
    const answer = JSON.parse(text) as unknown;
    const ids = placeOf(answer, undefined);
    return { answer, cursor: ids ? { ...cursor, count: ids.length } : undefined };
  }
  let answer: unknown;
  try {
    answer = JSON.parse(text.slice(0, open) + SENTINEL_JSON + text.slice(close + 1));
  } catch {
    return { answer: JSON.parse(text) };
  }
  const suffix = JSON.parse(`[${list.slice(known.cursor.textLength + 1)}]`) as unknown;
  const holder = placeOf(answer, SENTINEL);
  if (holder === undefined || !Array.isArray(suffix)) {
    // The list was not where a server puts it: read the answer the plain way.
    const plain = JSON.parse(text) as unknown;
    const ids = placeOf(plain, undefined);
    return { answer: plain, cursor: ids ? { ...cursor, count: ids.length } : undefined };
  }
  const ids: unknown[] = new Array(known.ids.length + suffix.length);
  for (let i = 0; i < known.ids.length; i++) ids[i] = known.ids[i];
  for (let i = 0; i < suffix.length; i++) ids[known.ids.length + i] = suffix[i];
  holder.prompt_token_ids = ids;
  return { answer, cursor: { ...cursor, count: ids.length } };
}

/** Index of the `[` of the first `"prompt_token_ids":[` key (a quote no backslash escapes), or -1. */
function keyAt(text: string): number {
  for (let at = text.indexOf(KEY); at >= 0; at = text.indexOf(KEY, at + 1)) {
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === 92) slashes++;
    if (slashes % 2 === 0) return at + KEY.length - 1;
  }
  return -1;
}

/** Whether `list` (a prompt-id list's text) starts with the hint's list text followed by more ids. */
function extendsHint(list: string, hint: PromptHint): boolean {
  const { textLength, hash, count } = hint.cursor;
  return (
    count > 0 &&
    hint.ids.length === count &&
    list.length > textLength + 1 &&
    list.charCodeAt(textLength) === 44 &&
    Bun.hash(list.slice(0, textLength)) === hash
  );
}

/**
 * The object holding the answer's prompt-id list (the root, else `choices[0]`) when its value is `marker`
 * (or, with `marker` undefined, an array); returns the array itself in that case.
 */
function placeOf(answer: unknown, marker: string): Record<string, unknown> | undefined;
function placeOf(answer: unknown, marker: undefined): unknown[] | undefined;
function placeOf(
  answer: unknown,
  marker: string | undefined,
): Record<string, unknown> | unknown[] | undefined {
  const root = (answer ?? {}) as Record<string, unknown>;
  const choices = Array.isArray(root.choices) ? (root.choices as Array<Record<string, unknown>>) : [];
  if (
    marker === undefined &&
    Array.isArray(root.prompt_token_ids) &&
    Array.isArray(choices[0]?.prompt_token_ids)
  )
    return undefined; // two lists: which one the text's first key is cannot be told without reading both
  for (const holder of [root, choices[0]]) {
    const value = holder?.prompt_token_ids;
    if (marker === undefined ? Array.isArray(value) : value === marker) {
      return marker === undefined ? (value as unknown[]) : holder;
    }
  }
  return undefined;
}
