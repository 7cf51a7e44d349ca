/** Counters of one policy instance; `takeStats` returns them per step window. */
export interface PolicyStats {
  /** Generations returned. */
  generations: number;
  /** HTTP requests sent to chat completions (every attempt). */
  requests: number;
  retries: number;
  /** Requests that still failed after their retries (the generation threw). */
  failures: number;
  /** Errors seen, by kind ("http_500", "timeout", "connection", "http_400", ...). */
  errors: Record<string, number>;
  /** Re-asks after unparseable replies. */
  formatRetries: number;
  /** Generations whose final reply still had no command. */
  parseErrors: number;
  /** Prompts counted through `/tokenize` (length check or missing ids). */
  tokenizeCalls: number;
  /** Generations that stopped because the prompt did not fit the context window. */
  contextLength: number;
  /** Requests whose max_tokens was lowered to fit the context window. */
  maxTokensClamped: number;
  /** Completion tokens the server gave no logprob for (llama.cpp: tokens ending inside a UTF-8 character), masked. */
  tokensWithoutLogprob: number;
}

/** A zeroed counter set. */
export function emptyStats(): PolicyStats {
  return {
    generations: 0,
    requests: 0,
    retries: 0,
    failures: 0,
    errors: {},
    formatRetries: 0,
    parseErrors: 0,
    tokenizeCalls: 0,
    contextLength: 0,
    maxTokensClamped: 0,
    tokensWithoutLogprob: 0,
  };
}

/** One log line with the non-zero counters. */
export function formatStats(stats: PolicyStats): string {
  const parts = Object.entries(stats)
    .filter(([key, value]) => key !== "errors" && value !== 0)
    .map(([key, value]) => `${key}=${value}`);
  const errors = Object.entries(stats.errors).map(([kind, n]) => `${kind}:${n}`);
  if (errors.length > 0) parts.push(`errors=${errors.join(",")}`);
  return parts.length > 0 ? parts.join(" ") : "no requests";
}

/** Counters as flat step metrics: `requests`, `retries`, ..., and `errors/<kind>` for each error kind. */
export function flattenStats(stats: PolicyStats): Record<string, number> {
  const { errors, ...counts } = stats;
  const out: Record<string, number> = { ...counts };
  for (const [kind, n] of Object.entries(errors)) out[`errors/${kind}`] = n;
  return out;
}
