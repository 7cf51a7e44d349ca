import type { Message } from "@air/core";
import type { PromptHint } from "./answer-ids.ts";
import type { ServerInfo } from "./kinds.ts";
import { promptBound } from "./prompt-bound.ts";
import { type TokenizeDeps, tokenizeMessages } from "./tokenize-calls.ts";

/** What fitting a prompt into the context window found. */
export interface WindowFit {
  /** The prompt's ids when it had to be tokenized (the cheap bound did not show it fits). */
  promptIds?: number[];
  /** `max_tokens`, lowered so prompt + completion fit. */
  maxTokens: number;
  /** The prompt alone fills the window: nothing can be sampled (a `context_length` stop). */
  full: boolean;
}

/** The request a window check is about. */
export interface WindowQuery {
  /** Context window in tokens (the config's, else the server's); undefined: unknown, nothing checked. */
  limit: number | undefined;
  maxTokens: number;
  messages: Message[];
  hint: PromptHint | undefined;
  info: ServerInfo;
  model: string;
  rolloutId: string;
  signal: AbortSignal;
}

/**
 * Fits a prompt into the context window: when the cheap bound (`promptBound`: the previous prompt's count plus
 * the new messages' bytes) says prompt + `max_tokens` might not fit, the prompt is counted exactly through the
 * server's tokenize route; a prompt of ≥ `limit` tokens is `full`, else `max_tokens` is lowered to fit (counted
 * as `maxTokensClamped`).
 * @example const fit = await fitWindow(deps, { limit: 8192, maxTokens: 1024, messages, hint, info, model, rolloutId, signal });
 */
export async function fitWindow(deps: TokenizeDeps, q: WindowQuery): Promise<WindowFit> {
  const { limit } = q;
  if (limit === undefined || promptBound(q.messages, q.hint) + q.maxTokens <= limit)
    return { maxTokens: q.maxTokens, full: false };
  const promptIds = await tokenizeMessages(deps, q.info, q.model, q.messages, q.rolloutId, q.signal);
  if (promptIds === undefined) return { maxTokens: q.maxTokens, full: false };
  if (promptIds.length >= limit) return { promptIds, maxTokens: q.maxTokens, full: true };
  if (promptIds.length + q.maxTokens <= limit) return { promptIds, maxTokens: q.maxTokens, full: false };
  deps.gate.count((s) => s.maxTokensClamped++);
  return { promptIds, maxTokens: limit - promptIds.length, full: false };
}
