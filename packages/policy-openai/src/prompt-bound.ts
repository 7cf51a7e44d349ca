import type { Message } from "@air/core";
import type { PromptHint } from "./answer-ids.ts";

/** Template tokens allowed per message (role markers, separators) and for the generation prompt. */
const PER_MESSAGE = 32;
const PER_PROMPT = 64;

/**
 * A bound on the prompt's token count, to tell whether it may not fit the context window (and must be tokenized
 * first). With the rollout's previous prompt (`hint`: its ids, and the cursor naming how many messages it had and
 * its last one), the bound is that prompt's token count plus the messages after it: O(new messages) per turn, and
 * tight, so a long rollout is not tokenized before every turn once its text passes the window in bytes. Without
 * one: byte-level BPE tokens cover at least one byte each, plus the template's tokens.
 * @example promptBound(messages, undefined) // Σ UTF-8 bytes + 32 per message + 64
 */
export function promptBound(messages: Message[], hint: PromptHint | undefined): number {
  const seen = hint?.cursor.messages;
  if (
    hint !== undefined &&
    typeof seen === "number" &&
    seen > 0 &&
    seen <= messages.length &&
    messages[seen - 1] === hint.cursor.lastMessage
  ) {
    return hint.ids.length + bytesOf(messages, seen) + PER_MESSAGE;
  }
  return bytesOf(messages, 0) + PER_PROMPT;
}

/** UTF-8 bytes of `messages` from `from` on, plus the template allowance per message. */
function bytesOf(messages: Message[], from: number): number {
  let sum = 0;
  // Buffer.byteLength counts UTF-8 bytes without encoding a copy of the conversation.
  for (let i = from; i < messages.length; i++)
    sum += Buffer.byteLength((messages[i] as Message).content, "utf8") + PER_MESSAGE;
  return sum;
}
