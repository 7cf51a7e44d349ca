import { join } from "node:path";
import { type AuditFindings, type BuiltinPlugins, type PluginDefinition, PluginRegistry } from "@air/core";
import primeRl from "@air/trainer-prime-rl";

/** Loads the first of `names` (default: the default export) that a workspace package exports, lazily. */
function from(specifier: string, ...names: string[]) {
  const wanted = names.length > 0 ? names : ["default"];
  return async () => {
    const mod = (await import(specifier)) as Record<string, PluginDefinition | undefined>;
    const def = wanted.map((n) => mod[n]).find((d) => d !== undefined);
    if (!def) throw new Error(`${specifier} has no export ${wanted.map((n) => `"${n}"`).join(" or ")}`);
    return def;
  };
}

/** Every built-in plugin, by kind and name. Core knows none of them; this table is the only link. */
export const BUILTIN_PLUGINS: BuiltinPlugins = {
  env: {
    mlgym: from("@air/env-mlgym", "default", "mlgymPlugin"),
    dataset: from("@air/env-dataset"),
    harbor: from("@air/env-harbor"),
  },
  reward: {
    delta: from("@air/reward-delta"),
    "exact-match": from("@air/env-dataset", "exactMatchReward"),
    "mc-letter": from("@air/env-dataset", "mcLetterReward"),
    numeric: from("@air/env-dataset", "numericReward"),
    format: from("@air/env-dataset", "formatReward"),
  },
  advantage: { grpo: from("@air/advantage-grpo") },
  strategy: {
    branching: from("@air/strategies", "branching"),
    interleaved: from("@air/strategies", "interleaved"),
  },
  policy: { openai: from("@air/policy-openai"), scripted: from("@air/policy-scripted") },
  trainer: {
    "prime-rl": from("@air/trainer-prime-rl"),
    none: from("@air/trainer-none"),
  },
  logger: {
    console: from("@air/loggers", "consoleLogger"),
    "step-line": from("@air/loggers", "stepLineLogger"),
    jsonl: from("@air/loggers", "jsonlLogger"),
    sqlite: from("@air/logger-sqlite"),
    wandb: from("@air/logger-wandb"),
  },
};

/**
 * The latest audit's findings for a run (what `bun run audit` stored in `<run dir>/air.db`), read by the store's
 * own package, loaded on first use: the launcher reads them once and hands them to every plugin (`ctx.audit`).
 * @example const audit = await readAuditFindings(config.runDir); audit?.noise // { apartmentRent: 0.004 }
 */
export async function readAuditFindings(runDir: string): Promise<AuditFindings | undefined> {
  const store = await import("@air/logger-sqlite/read");
  return store.readAuditFindings(join(runDir, "air.db"));
}

/** A registry holding every built-in plugin. */
export function builtinRegistry(): PluginRegistry {
  return new PluginRegistry(BUILTIN_PLUGINS);
}

/**
 * The plugins that start the processes `[trainer_process] kind` and `[inference] kind` name, through their
 * `launch.processes` hook (argv, environment, config files): the launcher looks a kind up here and knows no
 * process's argv or file format. prime-rl: its trainer, its inference server and stock `vllm serve`.
 */
export const PROCESS_PLUGINS: PluginDefinition[] = [primeRl];
