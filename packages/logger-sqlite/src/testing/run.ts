import { join } from "node:path";
import { definePlugin, type PluginRegistry, type RunSummary } from "@air/core";
import { runToml, testRegistry } from "@air/core/testing";
import sqliteLogger from "../plugin.ts";

/** Text the fixture puts into prompts, completions and observations, to prove the dashboard escapes it. */
export const XSS_PAYLOAD = `<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">`;

export interface FixtureRunOptions {
  /** Directory for the TOML file and `outputs/` (kept after the run). */
  dir: string;
  name?: string;
  maxSteps?: number;
  envStepDelayMs?: number;
  trainMs?: number;
  /** `orchestrator.eval_every` (0: no evaluation). */
  evalEvery?: number;
  signal?: AbortSignal;
  /** Appended to the TOML, e.g. more `[[logger]]` sections. */
  extraToml?: string;
  /** Registry to use instead of `fixtureRegistry()`. */
  registry?: PluginRegistry;
  /**
   * Resume the run stored under this name (what `rl --resume` does): the loop starts at `startStep` and the
   * sqlite logger gets `ctx.resume`, as the launcher's context gives it.
   */
  resume?: { startStep: number };
}

/**
 * The kit's in-memory plugins (`@air/core/testing`) and the sqlite logger.
 * @example const registry = fixtureRegistry().register(jsonlLogger);
 */
export function fixtureRegistry(resume?: { startStep: number }): PluginRegistry {
  if (!resume) return testRegistry().register(sqliteLogger);
  return testRegistry().register(
    definePlugin({
      ...sqliteLogger,
      create: (config, ctx) => sqliteLogger.create(config, { ...ctx, resume }),
    }),
  );
}

/**
 * Runs the real loop with the kit's `research` env and `researcher` policy (markup in their text) and the sqlite
 * logger, so the store holds a small run with rising rewards, a parse error, sandboxes and a trainer process.
 * @example const { dbPath } = await runFixture({ dir: mkdtempSync("/tmp/air-") });
 */
export async function runFixture(
  options: FixtureRunOptions,
): Promise<{ summary: RunSummary; runDir: string; dbPath: string }> {
  const payload = JSON.stringify(XSS_PAYLOAD);
  const toml = `[run]
name = "${options.name ?? "fixture"}"
max_steps = ${options.maxSteps ?? 3}
log_level = "error"

[orchestrator]
batch_size = 4
rollouts_per_example = 2
max_turns = 6
max_off_policy_steps = 1
eval_every = ${options.evalEvery ?? 0}

[env]
plugin = "research"
step_delay_ms = ${options.envStepDelayMs ?? 0}
payload = ${payload}

[policy]
plugin = "researcher"
payload = ${payload}

[trainer]
plugin = "memory"
train_ms = ${options.trainMs ?? 0}

[advantage]
plugin = "mean"

[strategy]
plugin = "per-turn"

[reward]
plugin = "score-gain"

[[logger]]
plugin = "sqlite"
flush_ms = 20
${options.extraToml ?? ""}`;
  const run = await runToml(toml, {
    dir: options.dir,
    registry: options.registry ?? fixtureRegistry(options.resume),
    signal: options.signal,
    startStep: options.resume?.startStep,
  });
  return { summary: run.summary, runDir: run.runDir, dbPath: join(run.runDir, "air.db") };
}
