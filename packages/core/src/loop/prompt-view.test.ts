import { expect, test } from "bun:test";
import { EventBus } from "../events.ts";
import { PendingWork } from "../pending.ts";
import type { EnvSession, GenerateRequest } from "../plugin.ts";
import { makeTurn } from "../testing/builders.ts";
import type { Message } from "../types.ts";
import { setPromptMessages } from "./prompt-view.ts";
import { runRollout } from "./rollout.ts";

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

test("a 30-turn rollout holds no list per turn: each turn's prompt is a view of the one conversation", async () => {
  const session: EnvSession = {
    start: async () => [m("system", "system"), m("task")],
    step: async () => ({ observation: "obs", done: false, kind: "command" }),
    close: async () => {},
  };
  const requests: GenerateRequest[] = [];
  const trajectory = await runRollout(
    {
      env: { examples: async () => [], open: async () => session },
      policy: {
        version: 0,
        generate: async (request) => {
          requests.push(request);
          return {
            action: { text: `reply ${request.turnIndex}` },
            promptTokenIds: [1],
            completionTokenIds: [2],
            completionLogprobs: [-1],
            finishReason: "stop",
            policyVersion: 0,
            temperature: 1,
          };
        },
      },
      bus: new EventBus(),
      pending: new PendingWork(),
      names: { env: "e", policy: "p" },
      maxTurns: 30,
      timeouts: { env_open_ms: 1000, env_step_ms: 1000, generate_ms: 1000 },
      signal: new AbortController().signal,
    },
    { rolloutId: "r", example: { id: "x", task: "t" }, groupId: "g", step: 0 } as Parameters<
      typeof runRollout
    >[1],
  );
  expect(trajectory.turns).toHaveLength(30);
  for (const [k, turn] of trajectory.turns.entries()) {
    expect(Object.getOwnPropertyDescriptor(turn, "promptMessages")?.get).toBeFunction();
    expect(turn.promptMessages).toHaveLength(2 + 2 * k);
    expect(turn.promptMessages).toEqual(requests[k]?.messages ?? []);
  }
  const last = trajectory.turns[29]?.promptMessages ?? [];
  expect(last.at(-2)).toEqual(m("reply 28", "assistant"));
  expect(last[2]).toBe(trajectory.turns[1]?.promptMessages[2] as Message);
});
