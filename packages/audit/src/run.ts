import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  AirError,
  attemptDeps,
  createLogger,
  type Example,
  type HostContext,
  type LogSink,
  PluginHost,
  type ResolvedConfig,
  rolloutWithRetries,
  Semaphore,
} from "@air/core";
import { loadTaskSet, mlgymConfigSchema } from "@air/env-mlgym";
import { scriptedConfigSchema, scriptedPolicyPlugin } from "@air/policy-scripted";
import { tamperOf } from "@air/reward-delta";
import { SANDBOX_WORKSPACE } from "@air/sandbox";
import type { z } from "zod";
import { baselineFindings, metricFindings } from "./analysis.ts";
import { type TaskFacts, taskFacts } from "./facts.ts";
import { forgeryPlans } from "./forgery-probes.ts";
import { auditHarbor } from "./harbor.ts";
import { noiseFinding } from "./noise.ts";
import { baselinePlan, type ProbePlan, trivialPlans } from "./probes.ts";
import { readPlans } from "./read-probes.ts";
import { formatTable } from "./report.ts";
import { storeAudit } from "./store.ts";
import type { Finding, ProbeRun } from "./types.ts";

/**
 * Sections the audit fills in when a config leaves them out: it only uses `[env]` (and `[run]`,
 * `[orchestrator]`); its policy is always the built-in scripted one and it computes no rewards. Pass as
 * `loadConfig`'s `defaults`.
 * @example await loadConfig(file, { registry, defaults: AUDIT_CONFIG_DEFAULTS })
 */
export const AUDIT_CONFIG_DEFAULTS = { policy: { plugin: "scripted" }, reward: { plugin: "delta" } };

/** Format version of audit.json. */
export const AUDIT_SCHEMA_VERSION = 1;

export interface AuditOptions {
  /** Only these tasks (names or ids as the config uses them); default every train and eval task. */
  tasks?: string[];
  /** Baseline repeats per task (default 3). */
  repeats?: number;
  /** Probe rollouts at a time (default `orchestrator.max_concurrent_rollouts`). */
  concurrency?: number;
  context?: HostContext;
  signal?: AbortSignal;
  sink?: LogSink;
  /** Where the table goes (default: stdout). */
  print?: (text: string) => void;
}

/** What `auditConfig` returns and writes to `<run dir>/audit.json`. */
export interface AuditReport {
  schemaVersion: number;
  configFile: string;
  runName: string;
  runtime: string;
  repeats: number;
  tasks: string[];
  findings: Finding[];
  /** Number of critical findings (a leak or a forgeable score); `bun run audit` exits 1 when it is above 0. */
  critical: number;
  createdAt: string;
  durationMs: number;
  files: { json: string; sqlite: string };
}

const slug = (text: string) => text.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "");

/**
 * Audits every task of a config before anyone trains on it: baseline reproduction (N repeats), trivial
 * submissions, cheating probes and metric sanity, each probe one rollout of the built-in `scripted` policy in a
 * fresh sandbox of the config's own env (same runtime, same evaluation). Plugins come from core's `PluginHost`.
 * Prints a table, writes `<run dir>/audit.json` and rows in the run store's `audits` table.
 * @example
 * const report = await auditConfig(config, { repeats: 3 });
 * process.exit(report.critical > 0 ? 1 : 0);
 */
export async function auditConfig<E extends Record<string, z.ZodType>>(
  config: ResolvedConfig<E>,
  options: AuditOptions = {},
): Promise<AuditReport> {
  const started = Date.now();
  if (config.plugins.env.definition.name === "harbor") return auditHarborConfig(config, options, started);
  if (config.plugins.env.definition.name !== "mlgym")
    throw new AirError(
      "CONFIG_INVALID",
      `audit probes MLGym-format and Harbor tasks: [env] plugin is "${config.plugins.env.spec}", not "mlgym" or "harbor"`,
    );
  const envConfig = mlgymConfigSchema.parse(config.plugins.env.config);
  const root = resolve(config.dir, envConfig.mlgym_root);
  const repeats = options.repeats ?? 3;
  const host = new PluginHost(config, {
    sink: options.sink,
    signal: options.signal,
    context: { ...options.context, evaluation: true },
  });
  const log = createLogger("audit", host.sink);
  let status: "completed" | "failed" | "aborted" = "completed";
  let failure: string | undefined;
  const findings: Finding[] = [];
  const taskIds: string[] = [];
  try {
    const set = await loadTaskSet(envConfig, root);
    const wanted = options.tasks?.map((t) => set.idOf.get(t) ?? t);
    for (const w of wanted ?? [])
      if (!set.byId.has(w))
        throw new AirError(
          "CONFIG_INVALID",
          `--tasks: ${w} is not a task of this config (${[...set.byId.keys()].join(", ")})`,
        );
    const env = await host.create(config.plugins.env);
    const examples = new Map<string, Example>();
    for (const split of ["train", "eval"] as const)
      for (const e of await env.examples(split)) if (!examples.has(e.task)) examples.set(e.task, e);
    // Where the agent's shell sees its workspace; the unsandboxed runtime has no fixed path (relative paths).
    const workspace =
      envConfig.runtime === "docker"
        ? envConfig.docker.workspace
        : envConfig.local.isolation === "bwrap"
          ? SANDBOX_WORKSPACE
          : ".";
    const semaphore = new Semaphore(options.concurrency ?? config.root.orchestrator.max_concurrent_rollouts);
    let counter = 0;
    const play = async (
      facts: TaskFacts,
      example: Example,
      plan: ProbePlan,
      repeat = 0,
    ): Promise<ProbeRun> => {
      if (plan.commands.length === 0) return { turns: [] };
      const release = await semaphore.acquire();
      try {
        const id = `audit-${slug(facts.task.id)}-${slug(plan.probe)}-${repeat}-${counter++}`;
        const policy = await host.create(
          {
            kind: "policy",
            path: "policy",
            spec: "scripted",
            definition: scriptedPolicyPlugin,
            config: scriptedConfigSchema.parse({ commands: plan.commands }),
          },
          `scripted:${id}`,
        );
        const orchestrator = {
          ...config.root.orchestrator,
          max_turns: plan.commands.length,
          rollout_retries: 0,
        };
        const deps = attemptDeps(
          { env, policy, rewards: [], names: { env: "mlgym", policy: "scripted" } },
          { bus: host.bus, log, signal: host.signal, pending: host.pending, orchestrator },
        );
        const t = await rolloutWithRetries(deps, {
          rolloutId: id,
          example,
          groupId: `audit:${facts.task.id}`,
          step: 0,
          split: "eval",
        });
        log.info(`${facts.task.id}: ${plan.probe}${plan.group === "baseline" ? ` #${repeat + 1}` : ""} done`);
        return {
          turns: t.turns,
          error: t.stopReason === "failed" ? (t.error ?? "rollout failed") : undefined,
        };
      } finally {
        release();
      }
    };
    const perTask = [...set.byId.values()]
      .filter((task) => !wanted || wanted.includes(task.id))
      .map(async (task) => {
        taskIds.push(task.id);
        const example = examples.get(task.id);
        if (!example) throw new AirError("ENV_FAILED", `the env has no example of task ${task.id}`);
        const facts = taskFacts(task, workspace);
        const base = baselinePlan(facts);
        const baselineRuns = facts.baselineRunnable
          ? Promise.all(Array.from({ length: repeats }, (_, i) => play(facts, example, base, i)))
          : Promise.resolve([]);
        const plans = [...trivialPlans(facts), ...readPlans(facts), ...forgeryPlans(facts)];
        const probeRuns = Promise.all(plans.map((p) => play(facts, example, p)));
        const [bRuns, pRuns] = await Promise.all([baselineRuns, probeRuns]);
        const out: Finding[] = [
          ...baselineFindings(facts, bRuns).map((f) => ({ ...f, task: task.id })),
          ...(facts.baselineRunnable ? [{ ...noiseFinding(facts, bRuns), task: task.id }] : []),
          ...plans.map((p, i) => {
            const run = pRuns[i] as ProbeRun;
            const tamper = [...new Set(run.turns.flatMap((t) => tamperOf(t)))];
            return {
              task: task.id,
              probe: p.probe,
              group: p.group,
              ...p.judge(run),
              ...(tamper.length > 0 ? { tamper } : {}),
            };
          }),
          ...metricFindings(facts, bRuns, [...bRuns, ...pRuns]).map((f) => ({ ...f, task: task.id })),
        ];
        return out;
      });
    for (const f of await Promise.all(perTask)) findings.push(...f);
  } catch (error) {
    status = host.signal.aborted ? "aborted" : "failed";
    failure = error instanceof Error ? error.message : String(error);
    throw error;
  } finally {
    await host.shutdown({ status, error: failure, unsettled: host.pending.unsettled() });
  }
  const runtime = envConfig.runtime === "local" ? `local (${envConfig.local.isolation})` : "docker";
  return writeReport(config, options, { findings, tasks: taskIds, runtime, repeats, started });
}

/** Orders the findings by task, writes audit.json and the store's rows, prints the table. */
function writeReport<E extends Record<string, z.ZodType>>(
  config: ResolvedConfig<E>,
  options: AuditOptions,
  r: { findings: Finding[]; tasks: string[]; runtime: string; repeats: number; started: number },
): AuditReport {
  const { findings, started } = r;
  const order = new Map(r.tasks.map((t, i) => [t, i]));
  findings.sort((a, b) => (order.get(a.task) ?? 0) - (order.get(b.task) ?? 0));
  const json = join(config.runDir, "audit.json");
  const report: AuditReport = {
    schemaVersion: AUDIT_SCHEMA_VERSION,
    configFile: config.file,
    runName: config.root.run.name,
    runtime: r.runtime,
    repeats: r.repeats,
    tasks: r.tasks,
    findings,
    critical: findings.filter((f) => f.critical).length,
    createdAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    files: { json, sqlite: "" },
  };
  report.files.sqlite = storeAudit(config, report);
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  (options.print ?? ((t: string) => process.stdout.write(`${t}\n`)))(formatTable(report));
  return report;
}

/** The audit of a Harbor config (`auditHarbor`), written and printed like an MLGym one. */
async function auditHarborConfig<E extends Record<string, z.ZodType>>(
  config: ResolvedConfig<E>,
  options: AuditOptions,
  started: number,
): Promise<AuditReport> {
  const repeats = options.repeats ?? 3;
  const host = new PluginHost(config, {
    sink: options.sink,
    signal: options.signal,
    context: { ...options.context, evaluation: true },
  });
  const log = createLogger("audit", host.sink);
  let status: "completed" | "failed" | "aborted" = "completed";
  let failure: string | undefined;
  let result: Awaited<ReturnType<typeof auditHarbor>>;
  try {
    result = await auditHarbor({
      config: config as unknown as ResolvedConfig<Record<string, z.ZodType>>,
      host,
      log,
      repeats,
      concurrency: options.concurrency ?? config.root.orchestrator.max_concurrent_rollouts,
      tasks: options.tasks,
    });
  } catch (error) {
    status = host.signal.aborted ? "aborted" : "failed";
    failure = error instanceof Error ? error.message : String(error);
    throw error;
  } finally {
    await host.shutdown({ status, error: failure, unsettled: host.pending.unsettled() });
  }
  return writeReport(config, options, { ...result, repeats, started });
}
