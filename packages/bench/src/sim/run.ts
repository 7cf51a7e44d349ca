import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type EventHandlers,
  loadConfig,
  type PluginDefinition,
  PluginRegistry,
  type RunSummary,
  startRun,
} from "@air/core";
import type { LatencySpec } from "./latency.ts";
import { SIM_PLUGINS } from "./plugins.ts";

function builtin(specifier: string, name = "default") {
  return async () => {
    const mod = (await import(specifier)) as Record<string, PluginDefinition>;
    const def = mod[name];
    if (!def) throw new Error(`${specifier} has no export "${name}"`);
    return def;
  };
}

/**
 * The built-in plugins a simulated run uses (real policy, advantage, strategy, trainer "none") plus the
 * simulated env, reward and trainer.
 * @example const registry = simRegistry();
 */
export function simRegistry(): PluginRegistry {
  const registry = new PluginRegistry({
    policy: { openai: builtin("@air/policy-openai") },
    advantage: { grpo: builtin("@air/advantage-grpo") },
    strategy: {
      branching: builtin("@air/strategies", "branching"),
      interleaved: builtin("@air/strategies", "interleaved"),
    },
    trainer: { none: builtin("@air/trainer-none") },
    logger: { sqlite: builtin("@air/logger-sqlite") },
  });
  for (const p of SIM_PLUGINS) registry.register(p);
  return registry;
}

/** What a simulated run needs. */
export interface SimRunOptions {
  /** One server, or several (`policy.base_url` as a list). */
  baseUrl: string | string[];
  inFlight: number;
  batchSize: number;
  rolloutsPerExample: number;
  steps: number;
  maxTurns: number;
  maxOffPolicySteps: number;
  envLatency: LatencySpec;
  /** sim-trainer step time; undefined: trainer "none". */
  trainerStepMs?: number;
  completionTokens: number;
  seed: number;
  /** Record the run with the sqlite logger (into the temp run dir). */
  sqliteLogger?: boolean;
  hooks?: Partial<EventHandlers>;
  /** sim-env's observation length (default: its short listing). */
  observationChars?: number;
  /** sim-env's task prompt length (default 1500). */
  taskChars?: number;
  /** The policy's `history.last_observations` (default: the policy's, MLGym's 5; 0 keeps every observation). */
  lastObservations?: number;
  /** Strategy plugin (default "branching"). */
  strategy?: "branching" | "interleaved";
  /** The policy's `max_model_len`, the context window it checks prompts against (default 1,000,000). */
  maxModelLen?: number;
}

function toml(o: SimRunOptions): string {
  const quote = (v: unknown) => JSON.stringify(v);
  const latency = `{ dist = ${quote(o.envLatency.dist)}, median_ms = ${o.envLatency.median_ms}, spread = ${o.envLatency.spread} }`;
  return [
    o.sqliteLogger ? "" : "logger = []",
    "[run]",
    `name = "bench"`,
    `max_steps = ${o.steps}`,
    `seed = ${o.seed}`,
    `log_level = "error"`,
    "[model]",
    `name = "sim"`,
    "[orchestrator]",
    `batch_size = ${o.batchSize}`,
    `rollouts_per_example = ${o.rolloutsPerExample}`,
    `max_concurrent_rollouts = ${o.inFlight}`,
    `max_off_policy_steps = ${o.maxOffPolicySteps}`,
    `max_turns = ${o.maxTurns}`,
    "rollout_retries = 0",
    "[env]",
    `plugin = "sim-env"`,
    `step_latency = ${latency}`,
    ...(o.observationChars === undefined ? [] : [`observation_chars = ${o.observationChars}`]),
    ...(o.taskChars === undefined ? [] : [`task_chars = ${o.taskChars}`]),
    "[policy]",
    `plugin = "openai"`,
    `base_url = ${quote(o.baseUrl)}`,
    `max_tokens = ${o.completionTokens}`,
    `max_concurrent_requests = ${Math.max(o.inFlight, 1)}`,
    `max_model_len = ${o.maxModelLen ?? 1_000_000}`,
    "max_retries = 0",
    ...(o.lastObservations === undefined ? [] : [`history = { last_observations = ${o.lastObservations} }`]),
    "[trainer]",
    o.trainerStepMs === undefined
      ? `plugin = "none"`
      : `plugin = "sim-trainer"\nstep_ms = ${o.trainerStepMs}`,
    "[advantage]",
    `plugin = "grpo"`,
    "[strategy]",
    `plugin = ${quote(o.strategy ?? "branching")}`,
    "[reward]",
    `plugin = "sim-reward"`,
    ...(o.sqliteLogger ? ["[[logger]]", `plugin = "sqlite"`] : []),
    "",
  ].join("\n");
}

/**
 * Runs the real loop (`startRun`) against a simulated server and env; the run dir is a temp dir removed after.
 * @example const summary = await runSimulated({ baseUrl, inFlight: 64, batchSize: 64, ... });
 */
export async function runSimulated(options: SimRunOptions): Promise<RunSummary> {
  const dir = mkdtempSync(join(tmpdir(), "air-bench-"));
  try {
    const file = join(dir, "bench.toml");
    writeFileSync(file, toml(options));
    const config = await loadConfig(file, { registry: simRegistry() });
    return await startRun(config, { hooks: options.hooks, sink: () => {} });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
