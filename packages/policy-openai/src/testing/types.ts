import type { SimTokenizer } from "./tokenizers.ts";

/** Options of the simulated vLLM server (all optional). */
export interface SimVllmOptions {
  model?: string;
  maxModelLen?: number;
  /** Report max_model_len in GET /v1/models (vLLM does). */
  reportMaxModelLen?: boolean;
  /** Completion text for the n-th chat request. */
  reply?: (body: Record<string, unknown>, index: number) => string;
  /** Honour `return_token_ids` (vLLM ≥ 0.10.2); false acts like an older server. */
  tokenIds?: boolean;
  /** Honour `return_tokens_as_token_ids` in logprob tokens. */
  tokensAsIds?: boolean;
  /** Ignore `logprobs: true` (like a server without logprob support). */
  noLogprobs?: boolean;
  /** Hold every chat request until `release()`. */
  gated?: boolean;
  /** Token ids of text and chat messages: UTF-8 bytes (default) or `charTokenizer` (4 characters a token). */
  tokenizer?: SimTokenizer;
  /** Milliseconds each chat completion takes (a sampler, called per request; default none). */
  latencyMs?: () => number;
  /** Port on 127.0.0.1 (default: any free one). */
  port?: number;
  /** Keep every request in `requests` (default true; a benchmark with millions of requests turns it off). */
  record?: boolean;
}

/** Counters the server keeps; `GET /sim/stats` returns them, `POST /sim/reset` zeroes them. */
export interface SimVllmStats {
  chatRequests: number;
  /** `POST /tokenize` requests (a policy checking a prompt against the context window first). */
  tokenizeRequests: number;
  inFlight: number;
  peakInFlight: number;
  /** `/pause`, `/resume`, `/update_weights`. */
  adminRequests: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: Record<string, unknown> | undefined;
}

export type Fault = { status: number } | { hangMs: number };
