import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import TOML from "@iarna/toml";
import { loadConfig, type ResolvedConfig } from "../config/load.ts";
import type { EventPayload, LogLevel } from "../events.ts";
import type { RunSummary } from "../loop/orchestrator.ts";
import { type StartRunOptions, startRun } from "../loop/run.ts";
import type { PluginDefinition } from "../plugin.ts";
import type { PluginRegistry } from "../registry.ts";
import type { Batch, Trajectory } from "../types.ts";
import { resetProbes, testRegistry } from "./plugins/index.ts";
import { type EventRecord, eventRecorder } from "./record.ts";

/** A run config: TOML text, a TOML-shaped object, or a function of the run's directory returning either. */
export type RunConfigInput =
  | string
  | Record<string, unknown>
  | ((dir: string) => string | Record<string, unknown>);

export interface RunTomlOptions {
  /** Registry to load the config with (default: `testRegistry()`, every in-memory plugin of the kit). */
  registry?: PluginRegistry;
  /** Plugins registered on top of the registry (e.g. `deltaReward`, a logger under test). */
  plugins?: PluginDefinition[];
  /** Dotted-path overrides as the CLI passes them, e.g. `{ run: { max_steps: 1 } }`. */
  overrides?: Record<string, unknown>;
  /** Directory for the TOML file (and, by default, `outputs/`); kept. Default: a fresh temp dir, removed after. */
  dir?: string;
  /** Keep the fresh temp dir after the run (to read its outputs). Ignored when `dir` is given. */
  keep?: boolean;
  signal?: AbortSignal;
  /** Abort the run after this long (default: never). */
  timeoutMs?: number;
  startStep?: StartRunOptions["startStep"];
  initialWeights?: StartRunOptions["initialWeights"];
  /** What the launcher adds to every plugin's context (e.g. `resume` on `rl --resume`). */
  context?: StartRunOptions["context"];
}

export interface LogLine {
  level: LogLevel;
  source: string;
  message: string;
}

/** What a `runToml` run produced. */
export interface RecordedRun extends EventRecord {
  summary: RunSummary;
  config: ResolvedConfig;
  /** Directory the TOML was written to (removed after the run unless kept). */
  dir: string;
  runDir: string;
  /** Every log line (`run.log_level` only filters stderr, which a test run does not write to). */
  logs: LogLine[];
  /** `step:end` payloads. */
  steps: Array<EventPayload<"step:end">>;
  /** Finished trajectories (`rollout:end`), eval ones included. */
  trajectories: Trajectory[];
  /** The batch of each step, as the trainer received it. */
  batches: Batch[];
}

/**
 * Writes a run config to `<dir>/run.toml` (`{{dir}}` in text becomes the directory), loads it with core's
 * `loadConfig` and a registry, runs it with `startRun` and records every event and log line.
 * @example
 * const run = await runToml(`
 * logger = []
 * [run]
 * name = "t"
 * max_steps = 2
 * [orchestrator]
 * batch_size = 4
 * rollouts_per_example = 2
 * [env]
 * plugin = "counting"
 * [policy]
 * plugin = "random"
 * [trainer]
 * plugin = "memory"
 * [advantage]
 * plugin = "mean"
 * [strategy]
 * plugin = "per-turn"
 * [reward]
 * plugin = "last-score"
 * `);
 * run.summary.stepsCompleted; // 2
 */
export async function runToml(input: RunConfigInput, options: RunTomlOptions = {}): Promise<RecordedRun> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "air-run-"));
  if (options.dir) mkdirSync(dir, { recursive: true });
  const remove = !options.dir && !options.keep;
  const controller = new AbortController();
  const abort = () => controller.abort();
  options.signal?.addEventListener("abort", abort, { once: true });
  if (options.signal?.aborted) abort();
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(abort, options.timeoutMs);
  try {
    const file = join(dir, "run.toml");
    writeFileSync(file, tomlText(typeof input === "function" ? input(dir) : input, dir));
    const registry = options.registry ?? testRegistry();
    for (const p of options.plugins ?? []) registry.register(p);
    const config = await loadConfig(file, { registry, overrides: options.overrides ?? {} });
    const { hooks, record } = eventRecorder();
    const logs: LogLine[] = [];
    resetProbes();
    const summary = await startRun(config, {
      signal: controller.signal,
      hooks,
      startStep: options.startStep,
      initialWeights: options.initialWeights,
      context: options.context,
      sink: (level, source, message) => logs.push({ level, source, message }),
    });
    const steps = record.of("step:end");
    return {
      ...record,
      summary,
      config,
      dir,
      runDir: config.runDir,
      logs,
      steps,
      trajectories: record.of("rollout:end").map((e) => e.trajectory),
      batches: steps.map((s) => s.batch),
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", abort);
    if (remove) rmSync(dir, { recursive: true, force: true });
  }
}

function tomlText(config: string | Record<string, unknown>, dir: string): string {
  if (typeof config === "string") return config.replaceAll("{{dir}}", dir);
  return TOML.stringify(tomlTable(config, "config"));
}

/** The object as TOML's JSON shape, checked value by value (undefined keys are left out). */
function tomlTable(table: Record<string, unknown>, path: string): TOML.JsonMap {
  const out: TOML.JsonMap = {};
  for (const [key, value] of Object.entries(table)) {
    if (value !== undefined) out[key] = tomlValue(value, `${path}.${key}`);
  }
  return out;
}

function tomlValue(value: unknown, path: string): TOML.AnyJson {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  if (value instanceof Date) return value;
  if (Array.isArray(value)) return value.map((v, i) => tomlArrayItem(v, `${path}[${i}]`));
  if (isTable(value)) return tomlTable(value, path);
  throw new Error(`runToml: ${path} is not a TOML value (${String(value)})`);
}

function tomlArrayItem(value: unknown, path: string): TOML.JsonMap | string | number | boolean | Date {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  if (value instanceof Date) return value;
  if (isTable(value)) return tomlTable(value, path);
  throw new Error(`runToml: ${path} is not a TOML array item (${String(value)})`);
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
