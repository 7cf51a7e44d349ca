import {
  type AuditFindings,
  type BuiltinPlugins,
  type PluginDefinition,
  PluginRegistry,
  type ResolvedConfig,
  type ResolvedPlugin,
  type StepLineOptions,
  type StepLines,
} from "@air/core";
import { evalSection } from "@air/eval/schema";

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
 * The latest audit's findings for a run (what `bun run audit` stored in the run's store: its `sqlite` logger's
 * file, else `<run dir>/air.db`), read by the store's own package, loaded on first use: the launcher reads them
 * once and hands them to every plugin (`ctx.audit`).
 * @example const audit = await readAuditFindings(config); audit?.noise // { apartmentRent: 0.004 }
 */
export async function readAuditFindings(
  config: Pick<ResolvedConfig, "runDir" | "plugins">,
): Promise<AuditFindings | undefined> {
  const store = await import("@air/logger-sqlite/read");
  return store.readAuditFindings(store.runStoreFile(config));
}

/** Sections of the other apps that a run's TOML may hold too: `[eval]` (`bun run eval`). */
export const APP_SECTIONS = { eval: evalSection };

/**
 * `rl`'s own step lines on its output: the `step-line` logger's view (`launch.stepLines`), as a `[[logger]]` entry
 * for the run's host and the view the launcher's log sink and teardown use.
 * @example const lines = await stepLines({ totalSteps: 10, rolloutsPerStep: 8, write: out, tty: false });
 */
export async function stepLines(
  options: StepLineOptions,
): Promise<{ plugin: ResolvedPlugin<"logger">; view: StepLines }> {
  const definition = await builtinRegistry().resolve("logger", "step-line", ".");
  const view = definition.launch?.stepLines?.(options);
  if (!view) throw new Error('the built-in "step-line" logger has no launch.stepLines');
  const plugin: ResolvedPlugin<"logger"> = {
    kind: "logger",
    path: "step-line",
    spec: "step-line",
    definition: { ...definition, create: () => ({ hooks: view.hooks, close: () => view.finish() }) },
    // Its create is the view above; the section is only its defaults (the launcher knows no logger keys).
    config: definition.configSchema.parse({}),
  };
  return { plugin, view };
}

/** A registry holding every built-in plugin. */
export function builtinRegistry(): PluginRegistry {
  return new PluginRegistry(BUILTIN_PLUGINS);
}

/**
 * The packages whose plugins start the processes `[trainer_process] kind` and `[inference] kind` name, through
 * their `launch.processes` hook (argv, environment, config files): the launcher looks a kind up in them and knows
 * no process's argv or file format. prime-rl: its trainer, its inference server and stock `vllm serve`.
 */
const PROCESS_PLUGIN_PACKAGES = ["@air/trainer-prime-rl"];
let processPluginsLoaded: PluginDefinition[] | undefined;

/**
 * The plugins of `PROCESS_PLUGIN_PACKAGES`, loaded on the first lookup of a process kind (a synchronous
 * `require`: kinds are looked up in synchronous code), so a launcher that starts no process never loads them.
 * @example processPlugins().find((p) => p.launch?.processes?.inference?.vllm)
 */
export function processPlugins(): PluginDefinition[] {
  processPluginsLoaded ??= PROCESS_PLUGIN_PACKAGES.map((specifier) => {
    const mod: { default?: PluginDefinition } = require(specifier);
    if (!mod.default?.launch?.processes)
      throw new Error(`${specifier} exports no plugin with launch.processes`);
    return mod.default;
  });
  return processPluginsLoaded;
}
