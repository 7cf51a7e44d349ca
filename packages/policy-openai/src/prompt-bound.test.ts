import { expect, test } from "bun:test";
import type { Message } from "@air/core";
import type { PromptCursor } from "./answer-ids.ts";
import { promptBound } from "./prompt-bound.ts";

const messages: Message[] = [
  { role: "system", content: "sys" },
  { role: "user", content: "task ü" },
  { role: "assistant", content: "reply" },
  { role: "user", content: "observation" },
];
const cursor = (n: number, last?: Message): PromptCursor => ({
  textLength: 1,
  hash: 1,
  count: 50,
  messages: n,
  lastMessage: last,
});
const bytes = 3 + 7 + 5 + 11; // "ü" is 2 bytes

test("without the previous prompt: every message's UTF-8 bytes plus the template allowance", () => {
  expect(promptBound(messages, undefined)).toBe(bytes + 4 * 32 + 64);
});

test("with it: the previous prompt's ids plus the messages after it", () => {
  const hint = { ids: new Array(50).fill(1), cursor: cursor(2, messages[1]) };
  expect(promptBound(messages, hint)).toBe(50 + 5 + 11 + 2 * 32 + 32);
});

test("a previous prompt that is not this conversation's prefix is not used", () => {
  const other = { ids: new Array(50).fill(1), cursor: cursor(2, { role: "user", content: "task ü" }) };
  expect(promptBound(messages, other)).toBe(bytes + 4 * 32 + 64);
  const longer = { ids: new Array(50).fill(1), cursor: cursor(5, messages[3]) };
  expect(promptBound(messages, longer)).toBe(bytes + 4 * 32 + 64);
  const none = { ids: new Array(50).fill(1), cursor: { textLength: 1, hash: 1, count: 50 } };
  expect(promptBound(messages, none)).toBe(bytes + 4 * 32 + 64);
});
