import { definePlugin, type Generation, type Policy } from "@air/core";
import { z } from "zod";

/**
 * The `[policy]` section of the `scripted` policy.
 * @example scriptedConfigSchema.parse({ commands: ["python train.py", "submit"] })
 */
export const scriptedConfigSchema = z.object({
  commands: z
    .array(z.string())
    .default([])
    .describe(
      "the command of each turn, in order (turn i replies commands[i]); used for tasks not in `tasks`",
    ),
  tasks: z
    .record(z.string(), z.array(z.string()))
    .default({})
    .describe("per task id (the task YAML's `id` for mlgym): its own command list"),
  after: z
    .string()
    .default("submit")
    .describe("the reply once a rollout's commands are used up (MLGym's `submit` ends the episode)"),
});

export type ScriptedConfig = z.output<typeof scriptedConfigSchema>;

/** Byte-level token ids of a text (one id per UTF-8 byte), so trainers and loggers get well-formed samples. */
function byteTokens(text: string): number[] {
  return [...new TextEncoder().encode(text)];
}

/**
 * A policy that replays fixed commands: turn i of a rollout replies `commands[i]` (or `tasks[<task>][i]`), then
 * `after`. Each reply is the action's command as is (multi-line `edit` bodies included), never parsed from
 * prose; token ids are UTF-8 bytes with logprob 0. It learns a rollout's task from `rollout:start`.
 * @example
 * const policy = createScriptedPolicy({ commands: ["ls", "submit"], tasks: {}, after: "submit" });
 * policy.hooks?.["rollout:start"]?.({ rolloutId: "r", task: "apartmentRent", ... });
 * (await policy.generate({ messages: [], rolloutId: "r", turnIndex: 0, signal })).action.command; // "ls"
 */
export function createScriptedPolicy(config: ScriptedConfig): Policy {
  const taskOf = new Map<string, string>();
  const script = (rolloutId: string): string[] => {
    const task = taskOf.get(rolloutId);
    return (task !== undefined ? config.tasks[task] : undefined) ?? config.commands;
  };
  return {
    version: 0,
    hooks: {
      "rollout:start": (e) => {
        taskOf.set(e.rolloutId, e.task);
      },
      "rollout:end": (e) => {
        taskOf.delete(e.trajectory.id);
      },
    },
    generate: async ({ messages, rolloutId, turnIndex }): Promise<Generation> => {
      const text = script(rolloutId)[turnIndex] ?? config.after;
      const completionTokenIds = byteTokens(text);
      return {
        action: { text, command: text },
        promptTokenIds: byteTokens(messages.map((m) => m.content).join("\n")),
        completionTokenIds,
        completionLogprobs: completionTokenIds.map(() => 0),
        finishReason: "stop",
        policyVersion: 0,
        temperature: 0,
      };
    },
  };
}

/**
 * The `scripted` policy plugin: replays commands per turn (or per task), so anyone can play a task by hand
 * (`bun run eval` with it) and `bun run audit` can probe tasks.
 * @example
 * // [policy]
 * // plugin = "scripted"
 * // commands = ["python train.py", "validate", "submit"]
 * // tasks = { rpsTournament = ["validate", "submit"] }
 */
export const scriptedPolicyPlugin = definePlugin({
  name: "scripted",
  kind: "policy",
  description: "replays fixed commands per turn (or per task): play a task by hand, audit it",
  configSchema: scriptedConfigSchema,
  create: (config) => createScriptedPolicy(config),
});
