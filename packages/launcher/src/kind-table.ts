import type { ProcessKind } from "@air/core";
import { processPlugins } from "./builtins.ts";

/** A section whose `kind` names a process a plugin starts. */
export type ProcessRole = "trainer_process" | "inference";

/**
 * Every process kind the launcher knows for a role, by name, from the plugins that start processes
 * (`launch.processes`); the first plugin to declare a name wins.
 * @example Object.keys(knownKinds("inference")) // ["prime-rl", "vllm"]
 */
export function knownKinds(role: ProcessRole): Record<string, ProcessKind> {
  const out: Record<string, ProcessKind> = {};
  for (const plugin of processPlugins())
    for (const [name, kind] of Object.entries(plugin.launch?.processes?.[role] ?? {})) out[name] ??= kind;
  return out;
}
