import { AirError, type Message } from "@air/core";
import type { ServerKind } from "./kinds.ts";
import type { InferenceServer } from "./server.ts";

function tokenList(answer: unknown): number[] | undefined {
  const tokens = (answer as { tokens?: unknown } | null)?.tokens;
  if (!Array.isArray(tokens)) return undefined;
  return tokens.every((t) => typeof t === "number" && Number.isInteger(t)) ? (tokens as number[]) : undefined;
}

function badShape(kind: ServerKind, route: string, answer: unknown): AirError {
  const shown = JSON.stringify(answer) ?? String(answer);
  return new AirError(
    "POLICY_FAILED",
    `the ${kind} server's ${route} answer is not a token id list: ${shown.slice(0, 200)}`,
    { plugin: "openai", hook: "generate" },
  );
}

/**
 * Prompt token ids of `messages` (generation prompt included) through the server kind's own routes:
 * vLLM `POST /tokenize {model, messages, add_generation_prompt}`; llama.cpp `POST /apply-template {messages}`
 * then `POST /tokenize {content, add_special, parse_special}` (what its chat route does before sampling).
 * Resolves undefined for kinds without such a route (SGLang returns the ids in the answer; hosted APIs have
 * none). An answer of the wrong shape, or no ids for a non-empty prompt, throws naming the kind.
 * @example const ids = await promptIdsByKind(server, "llama.cpp", "m", messages, signal);
 */
export async function promptIdsByKind(
  server: InferenceServer,
  kind: ServerKind,
  model: string,
  messages: Message[],
  signal: AbortSignal,
): Promise<number[] | undefined> {
  if (kind === "vllm") {
    const answer = await server.tokenizeMessages(model, messages, signal);
    const ids = tokenList(answer);
    if (ids === undefined || ids.length === 0) throw badShape(kind, "POST /tokenize", answer);
    return ids;
  }
  if (kind === "llama.cpp") {
    const rendered = await server.applyTemplate(messages, signal);
    const prompt = (rendered as { prompt?: unknown } | null)?.prompt;
    if (typeof prompt !== "string" || prompt === "") throw badShape(kind, "POST /apply-template", rendered);
    const answer = await server.tokenizeContent(prompt, signal);
    const ids = tokenList(answer);
    if (ids === undefined || ids.length === 0) throw badShape(kind, "POST /tokenize", answer);
    return ids;
  }
  return undefined;
}

/**
 * Why a server kind's answer lacks token data, in words a user can act on.
 * @example lacksHint("openai") // "a hosted API returns no token ids: use it with `eval` only"
 */
export function lacksHint(kind: ServerKind): string {
  switch (kind) {
    case "openai":
      return "a hosted API returns no token ids: use it with `eval` only";
    case "llama.cpp":
      return "llama.cpp returns completion ids and probabilities with top_logprobs ≥ 1, and prompt ids through /apply-template + /tokenize";
    case "sglang":
      return "SGLang returns ids with return_prompt_token_ids / return_token_ids (keep policy.return_token_ids = true)";
    case "vllm":
      return "vLLM returns ids with return_token_ids (vLLM ≥ 0.10.2; keep policy.return_token_ids = true)";
  }
}
