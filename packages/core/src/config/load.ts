import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import TOML from "@iarna/toml";
import { z } from "zod";
import { AirError, errorMessage } from "../errors.ts";
import type { PluginDefinition, PluginKind } from "../plugin.ts";
import type { PluginRegistry } from "../registry.ts";
import { deepMerge } from "./overrides.ts";
import { type RootConfig, rootSchema } from "./schema.ts";

/**
 * A plugin section after stage two: its definition and its validated config, typed by the definition's schema
 * (`z.output<S>`), so `definition.create(config, ctx)` type-checks without a cast.
 */
export interface ResolvedPlugin<K extends PluginKind = PluginKind, S extends z.ZodType = z.ZodType> {
  kind: K;
  /** The TOML path of the section, e.g. `reward[1]`. */
  path: string;
  spec: string;
  definition: PluginDefinition<K, S>;
  config: z.output<S>;
}

export interface ResolvedReward extends ResolvedPlugin<"reward"> {
  weight: number;
  name: string;
}

/** The parsed values of the caller's extra sections (`LoadOptions.extraSections`). */
export type ExtraSectionValues<E extends Record<string, z.ZodType>> = { [K in keyof E]: z.output<E[K]> };

/**
 * A loaded config. `E` are the caller's extra sections (the launcher's `deployment`, `inference`, ...): their
 * values are typed on `root` as their schemas' outputs.
 */
export interface ResolvedConfig<E extends Record<string, z.ZodType> = Record<never, z.ZodType>> {
  /** Absolute path of the TOML file. */
  file: string;
  dir: string;
  root: RootConfig & ExtraSectionValues<E>;
  /** Absolute run directory: `<output_dir>/<run.name>`. */
  runDir: string;
  plugins: {
    env: ResolvedPlugin<"env">;
    policy: ResolvedPlugin<"policy">;
    trainer: ResolvedPlugin<"trainer">;
    advantage: ResolvedPlugin<"advantage">;
    strategy: ResolvedPlugin<"strategy">;
    rewards: ResolvedReward[];
    loggers: ResolvedPlugin<"logger">[];
  };
}

export interface LoadOptions<E extends Record<string, z.ZodType> = Record<never, z.ZodType>> {
  registry: PluginRegistry;
  /** Values below the file (lowest priority). */
  defaults?: Record<string, unknown>;
  /** Values above the file, e.g. from `--orchestrator.batch_size 8`. */
  overrides?: Record<string, unknown>;
  /** Sections owned by the caller (e.g. the launcher's `deployment`, `inference`). */
  extraSections?: E;
}

/** Reads and parses a TOML file; a syntax error becomes a CONFIG_INVALID error naming the file and line. */
export function readToml(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new AirError("CONFIG_INVALID", `cannot read config ${file}: ${errorMessage(error)}`);
  }
  try {
    return JSON.parse(JSON.stringify(TOML.parse(text))) as Record<string, unknown>;
  } catch (error) {
    throw new AirError(
      "CONFIG_INVALID",
      `TOML syntax error in ${file}: ${errorMessage(error).split("\n")[0]}`,
    );
  }
}

/** Formats zod issues as `path.to.key: message (file)` lines, prefixed by `base`. */
export function formatIssues(error: z.ZodError, base: Array<string | number>, file: string): string[] {
  return error.issues.map((issue) => {
    const path = [...base, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
    let message = issue.message;
    if (issue.code === "unrecognized_keys") {
      return issue.keys
        .map((k) => `${tomlPath([...path, k])}: unknown key (check the spelling) (${file})`)
        .join("\n");
    }
    if (issue.code === "invalid_type" && /received undefined/.test(message))
      message = "required key is missing";
    return `${tomlPath(path) || "(root)"}: ${message} (${file})`;
  });
}

function tomlPath(path: Array<string | number>): string {
  return path.reduce<string>(
    (acc, p) => (typeof p === "number" ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p),
    "",
  );
}

/**
 * Loads a run config: defaults < TOML file < overrides, then validates in two stages: the root schema
 * (sections and their `plugin` keys), then each plugin's own schema for its section. Throws one
 * CONFIG_INVALID AirError whose `details` list every problem with its TOML path and the file.
 */
export async function loadConfig<E extends Record<string, z.ZodType> = Record<never, z.ZodType>>(
  file: string,
  options: LoadOptions<E>,
): Promise<ResolvedConfig<E>> {
  const abs = resolve(file);
  const shown = relative(process.cwd(), abs) || abs;
  const merged = deepMerge(deepMerge(options.defaults ?? {}, readToml(abs)), options.overrides ?? {});
  const stage1 = rootSchema(options.extraSections).safeParse(merged);
  if (!stage1.success) throw invalid(formatIssues(stage1.error, [], shown), shown);
  const root = stage1.data as ResolvedConfig<E>["root"];
  const dir = dirname(abs);
  // A local model directory ("./…" or "../…") is relative to the TOML file, like every path in it; every process
  // (trainer and inference TOMLs, the policy's model name) then gets the same absolute path.
  if (/^\.\.?\//.test(root.model.name)) root.model.name = resolve(dir, root.model.name);
  const problems: string[] = [];

  const resolveOne = async <K extends PluginKind>(
    kind: K,
    path: Array<string | number>,
    section: Record<string, unknown>,
    ownKeys: string[],
  ): Promise<ResolvedPlugin<K> | undefined> => {
    const spec = section.plugin as string;
    let definition: PluginDefinition<K>;
    try {
      definition = await options.registry.resolve(kind, spec, dir);
    } catch (error) {
      problems.push(`${tomlPath([...path, "plugin"])}: ${errorMessage(error)} (${shown})`);
      return undefined;
    }
    const own = Object.fromEntries(Object.entries(section).filter(([k]) => !ownKeys.includes(k)));
    const parsed = parsePluginSection(definition, own);
    if (!parsed.success) {
      problems.push(...formatIssues(parsed.error, path, shown));
      return undefined;
    }
    return { kind, path: tomlPath(path), spec, definition, config: parsed.data };
  };

  const single = <K extends PluginKind>(kind: K, key: string) =>
    resolveOne(kind, [key], root[key as keyof RootConfig] as Record<string, unknown>, ["plugin"]);
  const env = await single("env", "env");
  const policy = await single("policy", "policy");
  const trainer = await single("trainer", "trainer");
  const advantage = await single("advantage", "advantage");
  const strategy = await single("strategy", "strategy");

  const rewardList = Array.isArray(root.reward) ? root.reward : [root.reward];
  const rewards: ResolvedReward[] = [];
  for (const [i, section] of rewardList.entries()) {
    const path = Array.isArray(root.reward) ? ["reward", i] : ["reward"];
    const r = await resolveOne("reward", path, section, ["plugin", "weight", "name"]);
    if (r) rewards.push({ ...r, weight: section.weight, name: section.name ?? r.definition.name });
  }
  const names = rewards.map((r) => r.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup)
    problems.push(`reward: two entries are named "${dup}"; give one a distinct name = "..." (${shown})`);

  const loggerList = Array.isArray(root.logger) ? root.logger : [root.logger];
  const loggers: ResolvedPlugin<"logger">[] = [];
  for (const [i, section] of loggerList.entries()) {
    const path = Array.isArray(root.logger) ? ["logger", i] : ["logger"];
    const l = await resolveOne("logger", path, section, ["plugin"]);
    if (l) loggers.push(l);
  }

  if (problems.length > 0 || !env || !policy || !trainer || !advantage || !strategy)
    throw invalid(problems, shown);
  const runDir = resolve(dir, root.run.output_dir, root.run.name);
  return {
    file: abs,
    dir,
    root,
    runDir,
    plugins: { env, policy, trainer, advantage, strategy, rewards, loggers },
  };
}

/**
 * Validates a plugin's section with its schema, made strict when it is an object (a typo is an error rather than
 * a silent default); the data keeps the schema's output type.
 */
function parsePluginSection<K extends PluginKind, S extends z.ZodType>(
  definition: PluginDefinition<K, S>,
  section: Record<string, unknown>,
): { success: true; data: z.output<S> } | { success: false; error: z.ZodError } {
  const schema = definition.configSchema;
  if (schema instanceof z.ZodObject) {
    const strict = schema.strict().safeParse(section);
    if (!strict.success) return strict;
  }
  return schema.safeParse(section);
}

function invalid(details: string[], file: string): AirError {
  const lines = details.flatMap((d) => d.split("\n"));
  return new AirError("CONFIG_INVALID", `invalid config ${file}:\n  ${lines.join("\n  ")}`, {
    details: lines,
  });
}
