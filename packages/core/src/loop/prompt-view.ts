import type { Message, Turn } from "../types.ts";

/**
 * A turn's `promptMessages` held as a view of the rollout's conversation, not a copy of it.
 *
 * Turn k of a rollout saw the conversation's first 2 + 2k messages; a list of them per turn costs the rollout
 * O(turns²) references (7–9 KiB at 30 turns). The loop's conversation only grows, so a turn keeps the
 * conversation and its message count, and `turn.promptMessages` reads as that prefix (a fresh array per read, the
 * same messages). It is an own enumerable property, so spreads, `JSON.stringify` and `structuredClone` see the
 * list; assigning it replaces the view with the assigned list.
 */

const CONVERSATION = Symbol("air.conversation");
const COUNT = Symbol("air.promptCount");

interface Viewed {
  [CONVERSATION]: Message[];
  [COUNT]: number;
}

function read(this: Viewed): Message[] {
  return this[CONVERSATION].slice(0, this[COUNT]);
}

function write(this: Viewed, value: Message[]): void {
  Object.defineProperty(this, "promptMessages", {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

/**
 * Sets `turn.promptMessages` to `sent`: as a view of `conversation` when `sent` is its prefix message for message
 * (the policy sent the history as is), else as `sent` itself (history trimmed, format re-asks).
 * @example setPromptMessages(turn, generation.promptMessages ?? request.messages, episode.messages);
 */
export function setPromptMessages(turn: Turn, sent: Message[], conversation: Message[]): void {
  if (!isPrefix(sent, conversation)) {
    turn.promptMessages = sent;
    return;
  }
  Object.defineProperty(turn, CONVERSATION, { value: conversation, writable: true });
  Object.defineProperty(turn, COUNT, { value: sent.length, writable: true });
  Object.defineProperty(turn, "promptMessages", {
    get: read,
    set: write,
    enumerable: true,
    configurable: true,
  });
}

function isPrefix(sent: Message[], conversation: Message[]): boolean {
  if (sent.length > conversation.length) return false;
  for (let i = 0; i < sent.length; i++) if (sent[i] !== conversation[i]) return false;
  return true;
}
