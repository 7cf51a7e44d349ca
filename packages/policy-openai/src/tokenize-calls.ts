import type { Message } from "@air/core";
import type { RequestGate } from "./gate.ts";
import type { ServerInfo } from "./kinds.ts";
import type { ServerPool } from "./pool.ts";
import { promptIdsByKind } from "./prompt-ids.ts";
import { statusOf } from "./retry.ts";

/** What a tokenize call needs: the policy's gate (bound, retries, counters) and server pool. */
export interface TokenizeDeps {
  gate: RequestGate;
  pool: ServerPool;
}

/** Undefined for a server without the route (404) or refusing the request (400); other errors are thrown. */
async function orUndefined<T>(work: () => Promise<T>): Promise<T | undefined> {
  try {
    return await work();
  } catch (error) {
    const status = statusOf(error);
    if (status === 404 || status === 400) return undefined;
    throw error;
  }
}

/**
 * The chat prompt's token ids by the server kind's own route (`promptIdsByKind`), on the rollout's server
 * (`key`); counted as a /tokenize call. Undefined when the server has no such route.
 * @example const ids = await tokenizeMessages(deps, info, model, messages, "r0", signal);
 */
export async function tokenizeMessages(
  deps: TokenizeDeps,
  info: ServerInfo,
  model: string,
  messages: Message[],
  key: string,
  signal: AbortSignal,
): Promise<number[] | undefined> {
  deps.gate.count((s) => s.tokenizeCalls++);
  return await orUndefined(() =>
    deps.gate.run(
      "prompt tokenization",
      () => deps.pool.use(key, (server) => promptIdsByKind(server, info.kind, model, messages, signal)),
      signal,
    ),
  );
}

/**
 * A reply's token ids through vLLM's `POST /tokenize {model, prompt}` (an older vLLM without `token_ids`);
 * undefined when the server has no such route or answers without tokens.
 * @example const ids = await tokenizeText(deps, model, "ls", "r0", signal);
 */
export async function tokenizeText(
  deps: TokenizeDeps,
  model: string,
  text: string,
  key: string,
  signal: AbortSignal,
): Promise<number[] | undefined> {
  deps.gate.count((s) => s.tokenizeCalls++);
  const answer = await orUndefined(() =>
    deps.gate.run(
      "POST /tokenize",
      () => deps.pool.use(key, (server) => server.tokenizeText(model, text, signal)),
      signal,
    ),
  );
  const tokens = answer?.tokens;
  return Array.isArray(tokens) && tokens.every((t) => typeof t === "number") ? tokens : undefined;
}
