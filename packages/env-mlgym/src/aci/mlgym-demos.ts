import { readFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import type { Message } from "@air/core";
import { pyFormat } from "./py-format.ts";

/** The agent name MLGym's run.py gives its first agent (`primary_{run_idx}`); demo entries of other agents are skipped. */
export const MLGYM_AGENT_NAME = "primary_0";

/** What an agent config says about demonstrations (`demonstrations`, `put_demos_in_history`, `demonstration_template`). */
export interface DemoSettings {
  demonstrations?: unknown;
  put_demos_in_history?: unknown;
  demonstration_template?: unknown;
}

interface HistoryEntry {
  role?: string;
  content?: string | null;
  agent?: string;
}

/**
 * The messages MLGym's agent puts between the system prompt and the task from the config's demonstrations:
 * per `.traj` file (a path relative to the checkout, as MLGym resolves it), the `history` entries of this agent
 * without system messages — one user message `demonstration_template` with their contents joined by newlines,
 * or, with `put_demos_in_history`, each entry as its own message.
 * @example await loadDemonstrations("/src/MLGym", { demonstrations: ["demonstrations/x.traj"], demonstration_template: "{demonstration}" })
 */
export async function loadDemonstrations(root: string, settings: DemoSettings): Promise<Message[]> {
  const paths = settings.demonstrations ?? [];
  if (!Array.isArray(paths)) throw new Error("demonstrations: expected a list of .traj paths");
  const inHistory = settings.put_demos_in_history === true;
  const template = settings.demonstration_template;
  const messages: Message[] = [];
  for (const path of paths as string[]) {
    if (!inHistory && typeof template !== "string") {
      throw new Error("demonstrations need a demonstration_template or put_demos_in_history: true");
    }
    const file = isAbsolute(path) ? path : resolve(root, path);
    const parsed = JSON.parse(await readFile(file, "utf8")) as { history?: HistoryEntry[] };
    if (!Array.isArray(parsed.history)) throw new Error(`${file}: no "history" list`);
    const entries = parsed.history.filter(
      (e) => (e.agent === undefined || e.agent === MLGYM_AGENT_NAME) && e.role !== "system",
    );
    if (inHistory) {
      for (const e of entries) {
        messages.push({ role: e.role === "assistant" ? "assistant" : "user", content: e.content ?? "" });
      }
    } else {
      const demonstration = entries.map((e) => e.content ?? "").join("\n");
      messages.push({ role: "user", content: pyFormat(template as string, { demonstration }) });
    }
  }
  return messages;
}
