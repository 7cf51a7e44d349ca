import { AirError, type Message } from "@air/core";
import type { PromptCursor } from "./answer-ids.ts";
import { checkTokenData, readCompletion } from "./completion.ts";
import type { ServerInfo } from "./kinds.ts";
import { lacksHint } from "./prompt-ids.ts";
import type { Sampled } from "./sample-llama.ts";
import { type TokenizeDeps, tokenizeMessages, tokenizeText } from "./tokenize-calls.ts";

/** One chat completion answer and what the policy knew when it sent the request. */
export interface AnswerRead {
  answer: unknown;
  /** Cursor of the answer's prompt-id list (answer-ids.ts), when it was read from one. */
  cursor?: PromptCursor;
  info: ServerInfo;
  model: string;
  messages: Message[];
  /** Prompt ids tokenized before the request (the context-window check), if any. */
  promptIds: number[] | undefined;
  rolloutId: string;
  version: number;
  /** Training data is required: a generation without it fails. */
  needed: boolean;
  signal: AbortSignal;
}

/**
 * The sampled reply in `r.answer`: text, finish reason and token data — the ids the answer carries, else the
 * server kind's tokenize routes (prompt: `tokenizeMessages`; an older vLLM's reply: `tokenizeText`) — checked
 * for one logprob per completion id and counts that agree with `usage` (`checkTokenData`). Incomplete data fails
 * the generation when training needs it, naming the server kind; a hosted API (`openai`) in an evaluation skips all.
 * @example const sampled = await readSample(deps, { answer, cursor, info, model, messages, promptIds, rolloutId, version, needed, signal });
 */
export async function readSample(deps: TokenizeDeps, r: AnswerRead): Promise<Sampled> {
  const { info, signal, version } = r;
  const read = readCompletion(r.answer);
  if (!r.needed && info.kind === "openai") {
    const data = checkTokenData(
      read.promptTokenIds ?? [],
      read.completionTokenIds ?? [],
      read.logprobs ?? [],
    );
    return { text: read.text, finishReason: read.finishReason, ...data, version, usage: read.usage };
  }
  const promptIds =
    read.promptTokenIds ??
    r.promptIds ??
    (await tokenizeMessages(deps, info, r.model, r.messages, r.rolloutId, signal));
  let completionIds = read.completionTokenIds;
  if (completionIds === undefined && read.text !== "" && info.kind === "vllm") {
    const ids = await tokenizeText(deps, r.model, read.text, r.rolloutId, signal);
    if (ids !== undefined && ids.length === read.logprobs?.length) completionIds = ids;
  }
  if (read.text === "" && completionIds === undefined) completionIds = [];
  const data = checkTokenData(promptIds, completionIds, read.logprobs, read.usage);
  if (data.problems.length > 0 && r.needed) {
    throw new AirError(
      "POLICY_FAILED",
      `the ${info.kind} server's answer lacks training data: ${data.problems.join("; ")} (${lacksHint(info.kind)})`,
      { plugin: "openai", hook: "generate" },
    );
  }
  const sampled: Sampled = {
    text: read.text,
    finishReason: read.finishReason,
    ...data,
    version,
    usage: read.usage,
  };
  const cursor = r.cursor;
  if (
    cursor !== undefined &&
    read.promptTokenIds !== undefined &&
    cursor.count === data.promptTokenIds.length
  )
    sampled.cursor = { ...cursor, messages: r.messages.length, lastMessage: r.messages.at(-1) };
  return sampled;
}
