import { AirError, errorMessage, type GenerateRequest, type Generation } from "@air/core";
import type { PromptCursor } from "./answer-ids.ts";
import { checkTokenData, isContextLengthError, readLlamaCompletion } from "./completion.ts";
import type { RequestGate } from "./gate.ts";
import type { ServerPool } from "./pool.ts";
import { statusOf } from "./retry.ts";
import type { ChatBody } from "./server.ts";

/** One sampled reply as the policy reads it from a server's answer. */
export interface Sampled {
  text: string;
  finishReason: string;
  promptTokenIds: number[];
  completionTokenIds: number[];
  completionLogprobs: number[];
  /** `Generation.completionMask`: 0 for a token the server gave no logprob for; absent when every token has one. */
  completionMask?: number[];
  /** Weights version when the request was sent. */
  version: number;
  usage?: Generation["usage"];
  /** Cursor of the answer's prompt-id list (when the ids came from it). */
  cursor?: PromptCursor;
}

/** A `context_length` stop: the prompt (as far as known), nothing sampled. */
export function contextStop(promptIds: number[], version: number): Sampled {
  return {
    text: "",
    finishReason: "context_length",
    promptTokenIds: promptIds,
    completionTokenIds: [],
    completionLogprobs: [],
    version,
  };
}

/** What a llama.cpp sample needs from the policy: its chat body, prompt ids, and how it stops at the window. */
export interface LlamaRequest {
  /** The chat body the policy would send; its sampling fields are reused. */
  chat: ChatBody;
  /** The chat prompt's token ids (from `/apply-template` + `/tokenize`). */
  promptIds: number[] | undefined;
  maxTokens: number;
  request: GenerateRequest;
  version: number;
  /** The policy's context-length stop (it counts it). */
  stop: (promptIds: number[]) => Sampled;
}

/**
 * llama.cpp for training: its native `/completion` on the chat prompt's token ids, whose answer has the exact
 * completion ids (its chat route's logprob entries merge the tokens of a UTF-8 character split across tokens, so
 * the ids could not be recovered). A token whose logprob entry llama.cpp left out (one ending inside a UTF-8
 * character) gets logprob 0 and mask 0 (`completionMask`: not trained on) and is counted
 * (`tokensWithoutLogprob`); the rest of the sample trains.
 * @example return await sampleLlama(gate, pool, { chat, promptIds, maxTokens, request, version, stop });
 */
export async function sampleLlama(gate: RequestGate, pool: ServerPool, r: LlamaRequest): Promise<Sampled> {
  const { promptIds, maxTokens, request, version } = r;
  const { signal } = request;
  if (promptIds === undefined || promptIds.length === 0)
    throw new AirError("POLICY_FAILED", "llama.cpp: the chat prompt could not be tokenized", {
      plugin: "openai",
      hook: "generate",
    });
  const {
    logprobs: _l,
    top_logprobs: _t,
    messages: _m,
    model: _model,
    max_completion_tokens: _x,
    n: _n,
    ...sampling
  } = r.chat as Record<string, unknown>;
  const body = { ...sampling, prompt: promptIds, n_predict: maxTokens, n_probs: 1, return_tokens: true };
  let answer: unknown;
  try {
    answer = await gate.run(
      "completion",
      () => pool.use(request.rolloutId, (server) => server.llamaCompletion(body, signal)),
      signal,
      true,
    );
  } catch (error) {
    if (statusOf(error) === 400 && isContextLengthError(errorMessage(error))) return r.stop(promptIds);
    if (error instanceof AirError) throw error;
    throw new AirError("POLICY_FAILED", `llama.cpp /completion rejected: ${errorMessage(error)}`, {
      plugin: "openai",
      hook: "generate",
      cause: error,
    });
  }
  const read = readLlamaCompletion(answer);
  const usage = { promptTokens: promptIds.length, completionTokens: read.usage?.completionTokens ?? 0 };
  const mask = read.logprobs?.map((l) => (Number.isFinite(l) ? 1 : 0));
  const logprobs = read.logprobs?.map((l) => (Number.isFinite(l) ? l : 0));
  const data = checkTokenData(promptIds, read.completionTokenIds, logprobs, usage);
  if (data.problems.length > 0)
    throw new AirError(
      "POLICY_FAILED",
      `the llama.cpp server's /completion answer lacks training data: ${data.problems.join("; ")}`,
      { plugin: "openai", hook: "generate" },
    );
  const sampled: Sampled = { text: read.text, finishReason: read.finishReason, ...data, version, usage };
  if (read.missingLogprobs > 0 && mask !== undefined) {
    sampled.completionMask = mask;
    gate.count((s) => {
      s.tokensWithoutLogprob += read.missingLogprobs;
    });
  }
  return sampled;
}
