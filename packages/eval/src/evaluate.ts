import { mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import {
  AirError,
  createLogger,
  type HostContext,
  type LogSink,
  loadConfig,
  PluginHost,
  type PluginRegistry,
  parseOverrides,
  type ResolvedConfig,
  type Trajectory,
  tokenIdsAsLists,
  type WeightsRef,
} from "@air/core";
import type { z } from "zod";
import { runEvalRollouts } from "./driver.ts";
import { defaultKs } from "./pass-at-k.ts";
import { type EvaluationSummary, formatSummary, summarizeRollouts } from "./report.ts";
import { type EvalConfig, evalSection } from "./schema.ts";
import { storeInSqlite } from "./store.ts";

/**
 * Format version of the stored report JSON; bumped when its fields change meaning.
 * @example if (report.schemaVersion !== EVALUATION_SCHEMA_VERSION) throw new Error("unknown report format");
 */
export const EVALUATION_SCHEMA_VERSION = 1;

/** What `runEvaluation` returns and stores as JSON. */
export interface EvaluationReport extends EvaluationSummary {
  schemaVersion: number;
  /** "aborted" when the evaluation was stopped: unfinished rollouts then count as failed. */
  status: "completed" | "aborted";
  label: string;
  configFile: string;
  runName: string;
  model: string;
  policy: string;
  policyVersion: number;
  split: "train" | "eval";
  samplesPerExample: number;
  ks: number[];
  /** Reward entry that judged correctness ("total" = weighted sum) and its threshold. */
  correctReward: string;
  threshold: number;
  createdAt: string;
  durationMs: number;
  /** Where the report and the trajectories were written. */
  files: { report: string; trajectories: string; sqlite?: string };
}

export interface EvaluationOptions {
  /** Plugins by name (the launcher passes its built-ins; tests register in-memory ones). */
  registry: PluginRegistry;
  /** Sections the caller adds to the root schema (the launcher's `deployment`, `inference`, ...). */
  extraSections?: Record<string, z.ZodType>;
  /** Context fields every plugin gets from the launcher (inference URL, sandbox GPUs). */
  context?: HostContext;
  signal?: AbortSignal;
  /** Where log lines go (default: stderr at `run.log_level`). */
  sink?: LogSink;
  /** Where the result table is printed (default: stdout). */
  print?: (text: string) => void;
}

/**
 * Evaluates a policy: loads the config (`[eval]` section optional), runs `samples_per_example` rollouts of each
 * example of the eval split through core's rollout and reward code (no trainer), prints per-task and overall
 * figures (mean reward, accuracy, pass@k; MLGym best/last for scored tasks) and writes
 * `<run dir>/evaluations/<label>.json` plus the trajectories as JSONL; with a sqlite logger in the config the
 * figures also go to its `evaluations` table.
 * @example
 * const report = await runEvaluation("configs/dataset/debug.toml", ["--eval.samples_per_example", "4"], {
 *   registry: builtinRegistry(),
 * });
 * console.log(report.overall.passAtK["1"]);
 */
export async function runEvaluation(
  configFile: string,
  overrides: string[] | Record<string, unknown> = [],
  options: EvaluationOptions,
): Promise<EvaluationReport> {
  const config = await loadConfig(configFile, {
    registry: options.registry,
    overrides: Array.isArray(overrides) ? parseOverrides(overrides) : overrides,
    extraSections: { ...(options.extraSections ?? {}), eval: evalSection },
  });
  return evaluateConfig(config, options);
}

/**
 * `runEvaluation` on a config that is already loaded (with the `[eval]` section), e.g. by the launcher, which
 * loads it once for preflight and evaluation alike.
 * @example const report = await evaluateConfig(config, { registry });
 */
export async function evaluateConfig(
  config: ResolvedConfig<{ eval: typeof evalSection }>,
  options: Omit<EvaluationOptions, "extraSections" | "registry">,
): Promise<EvaluationReport> {
  const evalConfig: EvalConfig = config.root.eval;
  const started = Date.now();
  const host = new PluginHost(config, {
    sink: options.sink,
    signal: options.signal,
    context: { ...options.context, evaluation: true },
  });
  const log = createLogger("eval", host.sink);
  const { bus, pending } = host;
  let trajectories: Trajectory[] = [];
  let policyVersion = 0;
  const correctReward = pickCorrectReward(config, evalConfig);
  const n = evalConfig.samples_per_example ?? config.root.orchestrator.rollouts_per_example;
  const ks = evalConfig.k ?? defaultKs(n);
  let status: "completed" | "failed" | "aborted" = "completed";
  let failure: unknown;
  try {
    if (evalConfig.loggers) await host.createLoggers();
    const { env, policy, rewards, names } = await host.createRolloutParts();
    await bus.emit("run:start", {
      runName: config.root.run.name,
      runDir: config.runDir,
      config: config.root,
    });
    const all = await pending.run(
      `env.examples(${evalConfig.split})`,
      config.root.orchestrator.timeouts.env_open_ms,
      () => env.examples(evalConfig.split),
    );
    const examples = evalConfig.num_examples < 0 ? all : all.slice(0, evalConfig.num_examples);
    if (examples.length === 0)
      throw new AirError("ENV_FAILED", `the env has no ${evalConfig.split} examples`);
    if (evalConfig.weights) {
      const weights = weightsRef(config, evalConfig);
      if (!policy.loadWeights)
        throw new AirError(
          "CONFIG_INVALID",
          `eval.weights: policy "${config.plugins.policy.spec}" cannot load weights`,
        );
      log.info(`loading weights v${weights.version} from ${weights.path}`);
      await pending.run(
        `policy.loadWeights v${weights.version}`,
        config.root.orchestrator.timeouts.weights_ms,
        () => policy.loadWeights!(weights),
      );
    }
    policyVersion = policy.version;
    log.info(
      `evaluating ${examples.length} ${evalConfig.split} example(s) × ${n} sample(s) with policy v${policyVersion}`,
    );
    let done = 0;
    const total = examples.length * n;
    trajectories = await runEvalRollouts(
      {
        env,
        policy,
        rewards,
        names,
        bus,
        pending,
        log,
        signal: host.signal,
        orchestrator: config.root.orchestrator,
      },
      examples,
      n,
      evalConfig.max_concurrent ?? config.root.orchestrator.max_concurrent_rollouts,
      () => {
        done++;
        if (done % Math.max(1, Math.floor(total / 10)) === 0 || done === total)
          log.info(`${done}/${total} rollouts`);
      },
    );
    if (host.signal.aborted) status = "aborted";
  } catch (error) {
    status = host.signal.aborted ? "aborted" : "failed";
    failure = error;
  } finally {
    await host.shutdown({
      status,
      error: failure === undefined ? undefined : String(failure),
      unsettled: pending.unsettled(),
    });
  }
  if (failure !== undefined) throw failure;
  const summary = summarizeRollouts(trajectories, ks, judge(correctReward, evalConfig.threshold));
  const dir = join(config.runDir, "evaluations");
  const report: EvaluationReport = {
    schemaVersion: EVALUATION_SCHEMA_VERSION,
    status: status === "aborted" ? "aborted" : "completed",
    label: evalConfig.label,
    configFile: config.file,
    runName: config.root.run.name,
    model: config.root.model.name,
    policy: config.plugins.policy.spec,
    policyVersion,
    split: evalConfig.split,
    samplesPerExample: n,
    ks,
    correctReward,
    threshold: evalConfig.threshold,
    createdAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    files: {
      report: join(dir, `${evalConfig.label}.json`),
      trajectories: join(dir, `${evalConfig.label}.trajectories.jsonl`),
    },
    ...summary,
  };
  report.files.sqlite = await storeInSqlite(config, report, log);
  mkdirSync(dirname(report.files.report), { recursive: true });
  writeFileSync(
    report.files.trajectories,
    `${trajectories.map((t) => JSON.stringify(t, tokenIdsAsLists)).join("\n")}\n`,
  );
  writeFileSync(report.files.report, `${JSON.stringify(report, null, 2)}\n`);
  const print = options.print ?? ((text: string) => process.stdout.write(`${text}\n`));
  print(
    `evaluation "${report.label}" of ${report.model} (policy v${policyVersion}), ${report.split} split, ` +
      `correct = ${correctReward} >= ${report.threshold}\n${formatSummary(summary, ks)}\nwrote ${resolve(report.files.report)}`,
  );
  return report;
}

function weightsRef(config: ResolvedConfig, evalConfig: EvalConfig): WeightsRef {
  const path = resolve(config.dir, evalConfig.weights as string);
  const step = basename(path).match(/^step_(\d+)$/)?.[1];
  return {
    path,
    version: evalConfig.weights_version ?? (step ? Number(step) : 1),
    kind: evalConfig.weights_kind,
  };
}

function pickCorrectReward(config: ResolvedConfig, evalConfig: EvalConfig): string {
  const names = config.plugins.rewards.map((r) => r.name);
  const chosen = evalConfig.correct_reward ?? names[0] ?? "total";
  if (chosen !== "total" && !names.includes(chosen)) {
    throw new AirError(
      "CONFIG_INVALID",
      `eval.correct_reward: no reward entry named "${chosen}"; the entries are ${names.join(", ")} (or "total") (${config.file})`,
    );
  }
  return chosen;
}

function judge(reward: string, threshold: number) {
  return (t: Trajectory) => {
    const value = reward === "total" ? t.reward : t.rewardBreakdown?.[reward];
    return value !== undefined && value >= threshold;
  };
}
