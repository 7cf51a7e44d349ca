import { z } from "zod";
import { definePlugin } from "../../plugin.ts";
import type { Example, Message } from "../../types.ts";

const ROLE_TOKEN = { system: 1, user: 2, assistant: 3, tool: 4 } as const;
const END = 5;

function chars(text: string): number[] {
  return Array.from(text, (c) => 10 + (c.codePointAt(0) ?? 0));
}

/**
 * Renders messages like a chat template into token ids (role token, one token per character, end token, then
 * the assistant role); `dropThinking` removes past `<think>…</think>` as Qwen3's template does.
 * @example renderPrompt([{ role: "user", content: "hi" }], false) // [2, 114, 115, 5, 3]
 */
export function renderPrompt(messages: Message[], dropThinking: boolean): number[] {
  const out: number[] = [];
  for (const m of messages) {
    const content =
      dropThinking && m.role === "assistant" ? m.content.replace(/<think>.*?<\/think>/s, "") : m.content;
    out.push(ROLE_TOKEN[m.role], ...chars(content), END);
  }
  out.push(ROLE_TOKEN.assistant);
  return out;
}

function hash(text: string): number {
  let h = 2166136261;
  for (const c of text) h = Math.imul(h ^ (c.codePointAt(0) ?? 0), 16777619) >>> 0;
  return h;
}

/**
 * Env `guess`: guess a number (20 + example index); `validate <x>` and `submit <x>` score rmse = |x − target|
 * (baseline 10, lower is better), `submit` ends; anything else does nothing.
 * @example registry.register(guessEnv); // [env] plugin = "guess"  examples = 2
 */
export const guessEnv = definePlugin({
  name: "guess",
  kind: "env",
  configSchema: z.object({
    examples: z.number().int().positive().default(2).describe("number of examples ex0, ex1, …"),
  }),
  create: (config) => ({
    examples: async (): Promise<Example[]> =>
      Array.from({ length: config.examples }, (_, i) => ({
        id: `ex${i}`,
        task: "guess",
        data: { target: 20 + i },
        score: { priorityMetric: "rmse", directions: { rmse: "minimize" }, baseline: { rmse: 10 } },
      })),
    open: async (example) => {
      const target = Number(example.data?.target);
      return {
        start: async () => [
          { role: "system", content: "Guess the number." },
          { role: "user", content: "validate <x> or submit <x>" },
        ],
        step: async (action) => {
          const command = action.text.replace(/<think>.*?<\/think>/s, "").trim();
          const [verb, arg] = command.split(" ");
          if (verb !== "validate" && verb !== "submit")
            return { observation: "nothing happened", done: false };
          const guess = Number(arg);
          if (!Number.isFinite(guess))
            return {
              observation: "evaluation failed",
              done: verb === "submit",
              kind: verb,
              evaluationError: "bad guess",
            };
          const rmse = Math.abs(guess - target);
          return { observation: `rmse ${rmse}`, done: verb === "submit", kind: verb, scores: { rmse } };
        },
        close: async () => {},
      };
    },
  }),
});

/**
 * Policy `guesser` for the `guess` env, deterministic per rollout, turn and version: `mode = "never"` never
 * validates (air-agent's loss-0 case); `"mixed"` validates, submits, idles or writes prose. `think = true`
 * wraps completions in `<think>` blocks (dropped from later prompts, as Qwen3's template does).
 * @example registry.register(guesserPolicy); // [policy] plugin = "guesser"  mode = "mixed"
 */
export const guesserPolicy = definePlugin({
  name: "guesser",
  kind: "policy",
  configSchema: z.object({
    mode: z.enum(["never", "mixed"]).default("mixed").describe("never validate, or a mix of commands"),
    think: z.boolean().default(false).describe("wrap completions in <think> blocks"),
    temperature: z.number().default(1).describe("reported sampling temperature"),
  }),
  create: (config) => {
    let version = 0;
    return {
      get version() {
        return version;
      },
      loadWeights: async (weights) => {
        version = weights.version;
      },
      generate: async (request) => {
        const h = hash(`${request.rolloutId}/${request.turnIndex}/${version}`);
        let text = "let me look around";
        if (config.mode === "mixed") {
          const guess = 10 + (h % 21);
          text =
            h % 5 === 0
              ? "ls"
              : h % 5 === 1
                ? `submit ${guess}`
                : h % 7 === 2
                  ? "validate x"
                  : `validate ${guess}`;
          if (h % 10 === 5) text = "I am not sure what to do";
        }
        const parseError = /^(let me|I am)/.test(text) ? "no command found" : undefined;
        if (config.think) text = `<think>step ${request.turnIndex}</think>${text}`;
        const completionTokenIds = [...chars(text), END];
        return {
          action: parseError ? { text, parseError } : { text, command: text },
          promptTokenIds: renderPrompt(request.messages, config.think),
          completionTokenIds,
          completionLogprobs: completionTokenIds.map((_, i) => -((h >>> (i % 16)) % 100) / 100 - 0.01),
          finishReason: "stop",
          policyVersion: version,
          temperature: config.temperature,
        };
      },
    };
  },
});
