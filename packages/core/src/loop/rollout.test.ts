import { expect, test } from "bun:test";
import { EventBus } from "../events.ts";
import { createLogger } from "../log.ts";
import { PendingWork } from "../pending.ts";
import type { Environment, EnvSession, GenerateRequest, Policy } from "../plugin.ts";
import { rolloutWithRetries } from "./attempt.ts";
import { type RolloutDeps, runRollout } from "./rollout.ts";

/** A one-turn env whose sessions may name their format error, and a policy that records its requests. */
function deps(formatErrorMessage: string | undefined): { deps: RolloutDeps; requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  const session: EnvSession = {
    ...(formatErrorMessage === undefined
      ? {}
      : { formatErrorMessage, parseReply: (text: string) => ({ text }) }),
    start: async () => [{ role: "user", content: "task" }],
    step: async () => ({ observation: "ok", done: true, kind: "command" }),
    close: async () => {},
  };
  const env: Environment = { examples: async () => [], open: async () => session };
  const policy: Policy = {
    version: 0,
    generate: async (request: GenerateRequest) => {
      requests.push(request);
      return {
        action: { text: "x", command: "x" },
        promptTokenIds: [1],
        completionTokenIds: [2],
        completionLogprobs: [-1],
        finishReason: "stop",
        policyVersion: 0,
        temperature: 1,
      };
    },
  };
  return {
    requests,
    deps: {
      env,
      policy,
      bus: new EventBus(),
      pending: new PendingWork(),
      names: { env: "e", policy: "p" },
      maxTurns: 3,
      timeouts: { env_open_ms: 1000, env_step_ms: 1000, generate_ms: 1000 },
      signal: new AbortController().signal,
    },
  };
}

const input = { rolloutId: "r", example: { id: "x", task: "t" }, groupId: "g", step: 0 } as Parameters<
  typeof runRollout
>[1];

test("the session's formatErrorMessage and the count of its initial messages reach the policy; without a message none is sent", async () => {
  const withText = deps("Your output was not formatted correctly.");
  await runRollout(withText.deps, input);
  expect(withText.requests.map((r) => r.formatErrorMessage)).toEqual([
    "Your output was not formatted correctly.",
  ]);
  expect(withText.requests[0]?.initialMessages).toBe(1);
  expect(withText.requests[0]?.parseReply?.("x")).toEqual({ text: "x" });
  const without = deps(undefined);
  await runRollout(without.deps, input);
  expect(without.requests).toHaveLength(1);
  expect("formatErrorMessage" in (without.requests[0] as object)).toBe(false);
});

test("the policy's promptCursor comes back with the next turn's request, next to that turn's prompt ids", async () => {
  const { deps: d, requests } = deps(undefined);
  let turn = 0;
  const session: EnvSession = {
    start: async () => [{ role: "user", content: "task" }],
    step: async () => ({ observation: "ok", done: false, kind: "command" }),
    close: async () => {},
  };
  d.env = { examples: async () => [], open: async () => session };
  d.policy.generate = async (request: GenerateRequest) => {
    requests.push(request);
    const prompt = Array.from({ length: 3 + 3 * turn }, (_, i) => i);
    return {
      action: { text: "x", command: "x" },
      promptTokenIds: prompt,
      completionTokenIds: [100 + turn],
      completionLogprobs: [-1],
      finishReason: "stop",
      policyVersion: 0,
      temperature: 1,
      promptCursor: `cursor ${turn++}`,
    };
  };
  await runRollout(d, input);
  expect(requests.map((r) => r.previousPrompt?.cursor)).toEqual([undefined, "cursor 0", "cursor 1"]);
  expect(Array.from(requests[2]?.previousPrompt?.ids ?? [])).toEqual([0, 1, 2, 3, 4, 5]);
});

test("a 30-turn rollout holds no list per turn: each turn's prompt is a view of the one conversation", async () => {
  const { deps: d, requests } = deps(undefined);
  const session: EnvSession = {
    start: async () => [
      { role: "system", content: "system" },
      { role: "user", content: "task" },
    ],
    step: async () => ({ observation: "obs", done: false, kind: "command" }),
    close: async () => {},
  };
  d.env = { examples: async () => [], open: async () => session };
  d.maxTurns = 30;
  const generate = d.policy.generate;
  d.policy.generate = async (request: GenerateRequest) => ({
    ...(await generate(request)),
    action: { text: `reply ${request.turnIndex}` },
  });
  const trajectory = await runRollout(d, input);
  expect(trajectory.turns).toHaveLength(30);
  for (const [k, turn] of trajectory.turns.entries()) {
    expect(Object.getOwnPropertyDescriptor(turn, "promptMessages")?.get).toBeFunction();
    expect(turn.promptMessages).toHaveLength(2 + 2 * k);
    expect(turn.promptMessages).toEqual(requests[k]?.messages ?? []);
  }
  const last = trajectory.turns[29]?.promptMessages ?? [];
  expect(last.at(-2)).toEqual({ role: "assistant", content: "reply 28" });
  expect(last[2]).toBe(trajectory.turns[1]?.promptMessages[2] as (typeof last)[number]);
});

test("a rollout the run's stop aborted ends as aborted with no warning; one that fails by itself warns", async () => {
  const lines: Array<[string, string]> = [];
  const log = createLogger("core", (level, _source, message) => lines.push([level, message]));
  const run = async (aborted: boolean) => {
    const { deps: d } = deps(undefined);
    const stop = new AbortController();
    d.env.open = async () => {
      if (aborted) stop.abort();
      throw new Error(aborted ? "aborted" : "the container died");
    };
    const attempt = { ...d, signal: stop.signal, rewards: [], retries: 0, log, policyVersion: () => 0 };
    return rolloutWithRetries(
      { ...attempt, timeouts: { ...d.timeouts, reward_ms: 1000 } },
      { ...input, split: "train" },
    );
  };
  expect((await run(true)).error).toBe("aborted");
  expect(lines.filter(([level]) => level === "warn")).toEqual([]);
  expect((await run(false)).error).toBe("the container died");
  expect(lines.filter(([level]) => level === "warn").map(([, m]) => m)).toEqual([
    "rollout r (x) attempt 1 failed: the container died",
  ]);
});
