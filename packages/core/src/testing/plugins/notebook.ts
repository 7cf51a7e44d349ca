import { z } from "zod";
import type { EnvSession } from "../../plugin.ts";
import { definePlugin } from "../../plugin.ts";
import type { Example, StepResult } from "../../types.ts";

/**
 * Env `notebook`, whose sessions fork (for tree rollouts): `write <name>` adds a file to the session's workspace,
 * `ls` lists it, `validate` / `submit` score `{ score: number of files }` (`submit` ends). A fork copies the files
 * and the step count; what it writes afterwards is its own. Its state (`saveState`, `restore`: `rl --resume`) is the
 * files and the step count; a state without them (e.g. `{ lost: true }`) cannot be restored.
 * @example registry.register(notebookEnv); // [env] plugin = "notebook"
 */
export const notebookEnv = definePlugin({
  name: "notebook",
  kind: "env",
  configSchema: z.object({
    examples: z.number().int().positive().default(1).describe("number of examples nb0, nb1, …"),
    can_fork: z.boolean().default(true).describe("false: sessions have no fork() (an env that cannot fork)"),
  }),
  create(config) {
    const examples: Example[] = Array.from({ length: config.examples }, (_, i) => ({
      id: `nb${i}`,
      task: "notebook",
      score: { priorityMetric: "score", directions: { score: "maximize" }, baseline: { score: 0 } },
    }));
    const session = (files: Set<string>, steps: number): EnvSession => ({
      start: async () => [
        { role: "system", content: "Keep notes." },
        { role: "user", content: "write <name>, ls, validate or submit" },
      ],
      async step(action): Promise<StepResult> {
        steps++;
        const [verb, name] = action.text.trim().split(/\s+/);
        if (verb === "write" && name) {
          files.add(name);
          return { observation: `wrote ${name} (step ${steps})`, done: false };
        }
        if (verb === "ls") return { observation: [...files].sort().join(" ") || "(empty)", done: false };
        if (verb === "validate" || verb === "submit")
          return {
            observation: `score ${files.size}`,
            done: verb === "submit",
            kind: verb,
            scores: { score: files.size },
          };
        return { observation: "unknown command", done: false };
      },
      ...(config.can_fork ? { fork: async () => session(new Set(files), steps) } : {}),
      saveState: async () => ({ files: [...files].sort(), steps }),
      close: async () => {},
    });
    return {
      canFork: config.can_fork,
      examples: async () => examples,
      open: async () => session(new Set(), 0),
      restore: async (example, { state }) => {
        const { files, steps } = state;
        if (!Array.isArray(files) || typeof steps !== "number")
          throw new Error(`no notebook state of ${example.id} in ${JSON.stringify(state)}`);
        return session(new Set(files.map(String)), steps);
      },
    };
  },
});
