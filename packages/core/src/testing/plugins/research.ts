import { z } from "zod";
import { sleep } from "../../pending.ts";
import { definePlugin } from "../../plugin.ts";
import type { Example, Generation, Message } from "../../types.ts";

/**
 * Env `research`: one example per task; `validate` scores the example, `submit` scores and ends, anything else
 * echoes. The score grows with the weights version the policy names in its text (`v<N>`) and with each
 * validation, so a run shows a rising reward. Emits `sandbox:state` for a pretend sandbox per rollout.
 * `payload` is put into prompts and observations (a dashboard test passes markup it must escape).
 * @example registry.register(researchEnv); // [env] plugin = "research"  tasks = ["alpha", "beta"]
 */
export const researchEnv = definePlugin({
  name: "research",
  kind: "env",
  configSchema: z.object({
    tasks: z.array(z.string()).default(["alpha", "beta"]).describe("task names, one example each"),
    step_delay_ms: z.number().int().min(0).default(0).describe("sleep per env step"),
    payload: z.string().default("").describe("text added to the task prompt and to every observation"),
  }),
  create(config, ctx) {
    const examples: Example[] = config.tasks.map((task) => ({
      id: `${task}-0`,
      task,
      score: { priorityMetric: "Score", directions: { Score: "maximize" }, baseline: { Score: 0.5 } },
    }));
    const tail = config.payload ? ` ${config.payload}` : "";
    return {
      examples: async () => examples,
      async open(example, info) {
        const id = `box-${info.rolloutId}`;
        ctx.emit("sandbox:state", { id, rolloutId: info.rolloutId, state: "running" });
        let validations = 0;
        const spread = 0.02 * (Number(info.rolloutId.replace(/\D/g, "")) % 3);
        const score = (version: number) => Math.min(1, 0.4 + spread + 0.1 * version + 0.05 * validations++);
        return {
          start: async (): Promise<Message[]> => [
            { role: "system", content: "You are a research agent. Reply with one command in a ``` block." },
            { role: "user", content: `Task ${example.task}: improve the Score.${tail}` },
          ],
          async step(action) {
            if (config.step_delay_ms) await sleep(config.step_delay_ms);
            ctx.emit("sandbox:state", {
              id,
              rolloutId: info.rolloutId,
              state: "busy",
              command: action.command,
            });
            const version = Number(/v(\d+)/.exec(action.text)?.[1] ?? 0);
            if (!action.command) return { observation: `no command: ${action.parseError}`, done: false };
            if (action.command === "validate" || action.command === "submit") {
              const s = score(version);
              return {
                observation: `Score: ${s.toFixed(3)}${tail}`,
                done: action.command === "submit",
                scores: { Score: s },
                kind: action.command,
              };
            }
            return {
              observation: `ran ${action.command}${config.payload ? `\n${config.payload}` : ""}`,
              done: false,
            };
          },
          close: async () => {
            ctx.emit("sandbox:state", { id, rolloutId: info.rolloutId, state: "removed" });
          },
        };
      },
    };
  },
});

const COMMANDS = ["ls data", "python train.py", "validate", "cat <b>notes</b>.md", "validate", "submit"];

/**
 * Policy `researcher` for the `research` env: a fixed command script per turn (…, validate, …, validate,
 * submit); its text names the weights version. Turn 1 of rollouts whose id ends in 1 has no command block
 * (a parse error), with `payload` in its text.
 * @example registry.register(researcherPolicy); // [policy] plugin = "researcher"
 */
export const researcherPolicy = definePlugin({
  name: "researcher",
  kind: "policy",
  configSchema: z.object({
    payload: z.string().default("").describe("text added to the completion that fails to parse"),
  }),
  create(config) {
    let version = 0;
    return {
      get version() {
        return version;
      },
      async generate(request): Promise<Generation> {
        const command = COMMANDS[request.turnIndex % COMMANDS.length] ?? "ls";
        const broken = request.turnIndex === 1 && request.rolloutId.endsWith("1");
        const text = broken
          ? `v${version} I think <i>so</i>${config.payload ? ` ${config.payload}` : ""}`
          : `v${version} Let me run it.\n\`\`\`\n${command}\n\`\`\``;
        const n = 4 + (request.turnIndex % 3);
        return {
          action: broken ? { text, parseError: "no ``` block found" } : { text, command },
          promptTokenIds: request.messages.map((_, i) => i + 1),
          completionTokenIds: Array.from({ length: n }, (_, i) => 100 + i),
          completionLogprobs: Array.from({ length: n }, () => -0.5),
          finishReason: "stop",
          policyVersion: version,
          temperature: 1,
        };
      },
      async loadWeights(weights) {
        version = weights.version;
      },
    };
  },
});

/**
 * Reward `score-gain`: at each scored turn, the gain of `Score` over the previous one (the baseline first).
 * @example registry.register(scoreGainReward); // [reward] plugin = "score-gain"
 */
export const scoreGainReward = definePlugin({
  name: "score-gain",
  kind: "reward",
  configSchema: z.object({}),
  create: () => ({
    score(t) {
      let previous = t.score?.baseline?.Score ?? 0;
      return {
        turns: t.turns.map((turn) => {
          const s = turn.scores?.Score;
          if (s === undefined) return 0;
          const delta = s - previous;
          previous = s;
          return delta;
        }),
      };
    },
  }),
});
