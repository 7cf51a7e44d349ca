export { isContextLengthError } from "./kinds.ts";

/** What the policy reads from one chat completion answer. */
export interface CompletionRead {
  text: string;
  finishReason: string;
  /** vLLM's top-level `prompt_token_ids`, or SGLang's `choices[0].prompt_token_ids`. */
  promptTokenIds?: number[];
  /**
   * `choices[0].token_ids` (vLLM, SGLang), else the `id` of each logprob entry (llama.cpp), else ids from
   * `token_id:N` logprob tokens (vLLM's `return_tokens_as_token_ids`).
   */
  completionTokenIds?: number[];
  /** `choices[0].logprobs.content[i].logprob`, or `log(prob)` of llama.cpp's `post_sampling_probs` entries. */
  logprobs?: number[];
  usage?: { promptTokens: number; completionTokens: number };
}

const TOKEN_ID = /^token_id:(\d+)$/;

function numberArray(value: unknown): number[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.every((v) => typeof v === "number" && Number.isFinite(v)) ? (value as number[]) : undefined;
}

/** One logprob entry's logprob: `logprob`, or the log of llama.cpp's post-sampling `prob`. */
function entryLogprob(entry: Record<string, unknown>): number {
  if (typeof entry.logprob === "number") return entry.logprob;
  if (typeof entry.prob === "number" && entry.prob > 0) return Math.log(entry.prob);
  return Number.NaN;
}

/** One logprob entry's token id: llama.cpp's `id`, SGLang's `token_id`, or vLLM's `token_id:N` token text. */
function entryTokenId(entry: Record<string, unknown>): number | undefined {
  for (const key of ["id", "token_id"]) {
    const v = entry[key];
    if (typeof v === "number" && Number.isInteger(v) && v >= 0) return v;
  }
  const m = TOKEN_ID.exec(typeof entry.token === "string" ? entry.token : "");
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/**
 * Reads text, finish reason, token ids and logprobs from a chat completion answer of any known server (the
 * fields of vLLM, SGLang and llama.cpp do not collide). Missing parts are left undefined.
 * @example readCompletion({ choices: [{ message: { content: "hi" }, finish_reason: "stop" }] }).text // "hi"
 */
export function readCompletion(answer: unknown): CompletionRead {
  const root = (answer ?? {}) as Record<string, unknown>;
  const choices = Array.isArray(root.choices) ? (root.choices as Array<Record<string, unknown>>) : [];
  const choice = choices[0] ?? {};
  const message = (choice.message ?? {}) as Record<string, unknown>;
  const text = typeof message.content === "string" ? message.content : "";
  const finishReason = typeof choice.finish_reason === "string" ? choice.finish_reason : "stop";
  const content = ((choice.logprobs ?? {}) as Record<string, unknown>).content;
  const entries = Array.isArray(content) ? (content as Array<Record<string, unknown>>) : undefined;
  const logprobs = entries?.map(entryLogprob);
  const read: CompletionRead = { text, finishReason };
  if (logprobs?.every((l) => Number.isFinite(l))) read.logprobs = logprobs;
  read.promptTokenIds = numberArray(root.prompt_token_ids) ?? numberArray(choice.prompt_token_ids);
  read.completionTokenIds = numberArray(choice.token_ids);
  if (!read.completionTokenIds && entries && entries.length > 0) {
    const ids = entries.map(entryTokenId);
    if (ids.every((id) => id !== undefined)) read.completionTokenIds = ids as number[];
  }
  const usage = root.usage as { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined;
  if (typeof usage?.prompt_tokens === "number" && typeof usage.completion_tokens === "number") {
    read.usage = { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens };
  }
  return read;
}

/** Token data of one sample, complete or with the reasons it is not. */
export interface TokenData {
  promptTokenIds: number[];
  completionTokenIds: number[];
  completionLogprobs: number[];
  /** Why the data is incomplete (empty when complete); missing parts above are then filled with []/0. */
  problems: string[];
}

/**
 * Checks that prompt ids, completion ids and one logprob per completion token are all there, and that the id
 * counts agree with the answer's `usage` (a prompt of N tokens cannot have 0 or M ≠ N ids).
 * @example checkTokenData([1], [2, 3], [-0.1, -0.2]).problems // []
 */
export function checkTokenData(
  promptIds: number[] | undefined,
  completionIds: number[] | undefined,
  logprobs: number[] | undefined,
  usage?: { promptTokens: number; completionTokens: number },
): TokenData {
  const problems: string[] = [];
  if (promptIds === undefined)
    problems.push("no prompt token ids (none in the answer, none from tokenizing)");
  else if (promptIds.length === 0) problems.push("empty prompt token ids");
  else if (usage !== undefined && usage.promptTokens > 0 && usage.promptTokens !== promptIds.length) {
    problems.push(`${promptIds.length} prompt token ids but usage.prompt_tokens = ${usage.promptTokens}`);
  }
  if (completionIds === undefined) problems.push("no completion token ids");
  else if (
    usage !== undefined &&
    usage.completionTokens > 0 &&
    completionIds.length !== usage.completionTokens
  ) {
    problems.push(
      `${completionIds.length} completion token ids but usage.completion_tokens = ${usage.completionTokens}`,
    );
  }
  if (logprobs === undefined) problems.push("no logprobs");
  else if (completionIds !== undefined && logprobs.length !== completionIds.length) {
    problems.push(`${logprobs.length} logprobs for ${completionIds.length} completion tokens`);
  }
  const ids = completionIds ?? [];
  return {
    promptTokenIds: promptIds ?? [],
    completionTokenIds: ids,
    completionLogprobs: logprobs && logprobs.length === ids.length ? logprobs : ids.map(() => 0),
    problems,
  };
}

/**
 * Reads llama.cpp's native `/completion` answer (`return_tokens`, `n_probs`, `post_sampling_probs`): text, finish
 * reason (`stop_type` "limit" → "length"), the exact completion ids (`tokens`) and one logprob per token, taken
 * from `completion_probabilities` by walking both in order — llama.cpp leaves out the entry of a token that ends
 * inside a UTF-8 character, so such tokens get NaN (the caller names them; they cost that sample only).
 * @example readLlamaCompletion({ content: "ok", tokens: [5], completion_probabilities: [{ id: 5, prob: 0.5 }], stop_type: "eos" }).logprobs // [-0.693…]
 */
export function readLlamaCompletion(answer: unknown): CompletionRead & { missingLogprobs: number } {
  const root = (answer ?? {}) as Record<string, unknown>;
  const text = typeof root.content === "string" ? root.content : "";
  const finishReason = root.stop_type === "limit" ? "length" : "stop";
  const tokens = numberArray(root.tokens);
  const entries = Array.isArray(root.completion_probabilities)
    ? (root.completion_probabilities as Array<Record<string, unknown>>)
    : [];
  const read: CompletionRead & { missingLogprobs: number } = { text, finishReason, missingLogprobs: 0 };
  if (tokens === undefined) return read;
  read.completionTokenIds = tokens;
  const logprobs: number[] = [];
  let next = 0;
  for (const id of tokens) {
    const entry = entries[next];
    if (entry !== undefined && entryTokenId(entry) === id) {
      logprobs.push(entryLogprob(entry));
      next++;
    } else logprobs.push(Number.NaN);
  }
  read.missingLogprobs = logprobs.filter((l) => !Number.isFinite(l)).length;
  read.logprobs = logprobs;
  if (typeof root.tokens_predicted === "number" && typeof root.tokens_evaluated === "number")
    read.usage = { promptTokens: root.tokens_evaluated, completionTokens: root.tokens_predicted };
  return read;
}
