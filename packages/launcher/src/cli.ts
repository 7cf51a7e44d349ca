import { AirError, errorMessage, loadConfig, parseOverrides } from "@air/core";
import { builtinRegistry } from "./builtins.ts";
import { cleanOutputDir } from "./clean.ts";
import { EXIT } from "./launch.ts";
import { pluginTasks } from "./plugin-tasks.ts";
import { formatChecks, preflightPlan, runPreflight } from "./preflight.ts";
import { planOf } from "./run-plan.ts";
import { LAUNCHER_SECTIONS, type RunConfig } from "./sections.ts";

export { EXIT };

/**
 * A command line that asks for its usage: no first argument, `--help` or `-h`.
 * @example if (helpAsked(argv[0])) return printUsage(USAGE, argv[0]);
 */
export function helpAsked(first: string | undefined): first is undefined | "--help" | "-h" {
  return !first || first === "--help" || first === "-h";
}

/** Prints `usage`; the exit code: 0 when asked for (`--help`), 2 when the arguments were missing. */
export function printUsage(usage: string, first: string | undefined): number {
  process.stdout.write(`${usage}\n`);
  return first ? EXIT.ok : EXIT.badInput;
}

/**
 * Loads and validates a config with every built-in plugin and the launcher's own sections, and plans the run once
 * (`planRun`): returns the plan's config, the derived values filled in (`planOf` gives its plan).
 */
export async function resolveConfig(
  file: string,
  overrideArgs: string[],
  defaults: Record<string, unknown> = {},
): Promise<RunConfig> {
  const config = await loadConfig(file, {
    registry: builtinRegistry(),
    defaults,
    overrides: parseOverrides(overrideArgs),
    extraSections: LAUNCHER_SECTIONS,
  });
  const plan = planOf(config);
  if (plan.problems.length > 0)
    throw new AirError("CONFIG_INVALID", `invalid config ${file}:\n  ${plan.problems.join("\n  ")}`, {
      details: [...plan.problems],
    });
  return plan.config;
}

/** Prints a config error and returns exit code 2, or prints anything else and returns 1. */
export function reportConfigError(error: unknown): number {
  if (error instanceof AirError && (error.code === "CONFIG_INVALID" || error.code.startsWith("PLUGIN"))) {
    process.stderr.write(`error: ${error.message}\n`);
    return EXIT.badInput;
  }
  process.stderr.write(`error: ${errorMessage(error)}\n`);
  return EXIT.failed;
}

/** `rl validate <file> [--a.b value ...]`: prints the resolved config as JSON, or the errors. */
export async function validateCommand(args: string[]): Promise<number> {
  const [file, ...rest] = args;
  if (!file) {
    process.stderr.write("usage: rl validate <config.toml> [--section.key value ...]\n");
    return EXIT.badInput;
  }
  try {
    const config = await resolveConfig(file, rest);
    const plugins = Object.fromEntries(
      Object.entries(config.plugins).map(([k, v]) => [
        k,
        Array.isArray(v)
          ? v.map((p) => ({ path: p.path, plugin: p.spec, config: p.config }))
          : { plugin: v.spec, config: v.config },
      ]),
    );
    process.stdout.write(
      `${JSON.stringify({ file: config.file, runDir: config.runDir, root: config.root, plugins }, null, 2)}\n`,
    );
    // The env's tasks, read from their files (a missing or malformed task fails here, not mid-run).
    const tasks = await pluginTasks(config);
    for (const t of tasks.filter((r) => r.status !== "ok"))
      process.stderr.write(`${t.status}: ${t.name}: ${t.message}\n`);
    const failed = tasks.filter((r) => r.status === "fail");
    if (failed.length > 0) {
      process.stderr.write(`error: ${config.file}: ${failed.length} task check(s) failed (env section)\n`);
      return EXIT.badInput;
    }
    const loaded = tasks.filter((r) => r.status === "ok").length;
    process.stderr.write(
      `ok: ${config.file} is valid${loaded > 0 ? ` (tasks loaded: ${loaded} check(s) ok)` : ""}\n`,
    );
    return EXIT.ok;
  } catch (error) {
    return reportConfigError(error);
  }
}

/** `rl check <file> [overrides]`: preflight only, one line per check; exit 2 when any check fails. */
export async function checkCommand(args: string[]): Promise<number> {
  const [file, ...rest] = args;
  if (!file) {
    process.stderr.write("usage: rl check <config.toml> [--section.key value ...]\n");
    return EXIT.badInput;
  }
  let config: RunConfig;
  try {
    config = await resolveConfig(file, rest);
  } catch (error) {
    return reportConfigError(error);
  }
  const results = await runPreflight(await preflightPlan(planOf(config)));
  process.stdout.write(`${formatChecks(results)}\n`);
  const failed = results.filter((r) => r.status === "fail").length;
  process.stdout.write(failed ? `${failed} check(s) failed\n` : "all checks passed\n");
  return failed ? EXIT.badInput : EXIT.ok;
}

/** `rl clean <output_dir> [--grace-ms N]`: stops leftovers of earlier runs by pid files, run markers and labels. */
export async function cleanCommand(args: string[]): Promise<number> {
  const [dir, ...rest] = args;
  const graceMs = rest[0] === "--grace-ms" ? Number(rest[1]) : 10_000;
  if (!dir || (rest.length > 0 && (rest.length !== 2 || !Number.isFinite(graceMs)))) {
    process.stderr.write("usage: rl clean <output_dir> [--grace-ms N]\n");
    return EXIT.badInput;
  }
  const { actions } = await cleanOutputDir(dir, graceMs);
  process.stdout.write(actions.length ? `${actions.join("\n")}\n` : `nothing to clean under ${dir}\n`);
  return EXIT.ok;
}
