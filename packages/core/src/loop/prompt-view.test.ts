import { expect, test } from "bun:test";
import { makeTurn } from "../testing/builders.ts";
import type { Message } from "../types.ts";
import { setPromptMessages } from "./prompt-view.ts";

const m = (content: string, role: Message["role"] = "user"): Message => ({ role, content });

test("a prefix of the conversation is a view: it reads as the prefix, and spreads, JSON and clones see it", () => {
  const conversation = [m("task"), m("a1", "assistant"), m("o1")];
  const turn = makeTurn({ index: 1 });
  setPromptMessages(turn, conversation.slice(0, 2), conversation);
  conversation.push(m("a2", "assistant"));
  expect(turn.promptMessages).toEqual([m("task"), m("a1", "assistant")]);
  expect(turn.promptMessages[1]).toBe(conversation[1] as Message);
  expect(Object.getOwnPropertyDescriptor(turn, "promptMessages")?.get).toBeFunction();
  expect({ ...turn }.promptMessages).toEqual(turn.promptMessages);
  expect(JSON.parse(JSON.stringify(turn)).promptMessages).toEqual(turn.promptMessages);
  expect(structuredClone(turn).promptMessages).toEqual(turn.promptMessages);
  expect(Object.keys(turn)).toContain("promptMessages");
  turn.promptMessages = [m("replaced")];
  expect(turn.promptMessages).toEqual([m("replaced")]);
});

test("a list that is not the conversation's prefix (trimmed history, a re-ask) is kept as sent", () => {
  const conversation = [m("task"), m("a1", "assistant"), m("o1")];
  const sent = [conversation[0] as Message, m("[elided]"), conversation[2] as Message];
  const turn = makeTurn({ index: 1 });
  setPromptMessages(turn, sent, conversation);
  expect(turn.promptMessages).toBe(sent);
  const longer = [...conversation, m("format error")];
  setPromptMessages(turn, longer, conversation);
  expect(turn.promptMessages).toBe(longer);
});
