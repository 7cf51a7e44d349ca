import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  AirError,
  createLogger,
  type HostContext,
  type LogSink,
  PluginHost,
  type ResolvedConfig,
} from "@air/core";
import type { z } from "zod";
import { auditHarbor } from "./harbor.ts";
import { auditMlgym } from "./mlgym.ts";
import { formatTable } from "./report.ts";
import { storeAudit } from "./store.ts";
import type { AuditContext, AuditReport, AuditResult, Finding } from "./types.ts";

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

/**
 * Audits every task of a config before anyone trains on it: for MLGym-format tasks baseline reproduction (N
 * repeats), trivial submissions, cheating probes and metric sanity (`auditMlgym`), for Harbor tasks the oracle,
 * an empty run, a forgery and a look for the tests (`auditHarbor`); each probe one rollout of the built-in
 * `scripted` policy in a fresh sandbox of the config's own env (same runtime, same evaluation). Plugins come
 * from one core `PluginHost`. Prints a table, writes `<run dir>/audit.json` and rows in the run store's `audits`
 * table.
 * @example
 * const report = await auditConfig(config, { repeats: 3 });
 * process.exit(report.critical > 0 ? 1 : 0);
 */
export async function auditConfig<E extends Record<string, z.ZodType>>(
  config: ResolvedConfig<E>,
  options: AuditOptions = {},
): Promise<AuditReport> {
  const started = Date.now();
  const kind = config.plugins.env.definition.name;
  if (kind !== "mlgym" && kind !== "harbor")
    throw new AirError(
      "CONFIG_INVALID",
      `audit probes MLGym-format and Harbor tasks: [env] plugin is "${config.plugins.env.spec}", not "mlgym" or "harbor"`,
    );
  const repeats = options.repeats ?? 3;
  const host = new PluginHost(config, {
    sink: options.sink,
    signal: options.signal,
    context: { ...options.context, evaluation: true },
  });
  const context: AuditContext = {
    host,
    log: createLogger("audit", host.sink),
    env: config.plugins.env,
    configDir: config.dir,
    orchestrator: config.root.orchestrator,
    repeats,
    concurrency: options.concurrency ?? config.root.orchestrator.max_concurrent_rollouts,
    tasks: options.tasks,
  };
  let status: "completed" | "failed" | "aborted" = "completed";
  let failure: string | undefined;
  let result: AuditResult;
  try {
    result = await (kind === "harbor" ? auditHarbor(context) : auditMlgym(context));
  } catch (error) {
    status = host.signal.aborted ? "aborted" : "failed";
    failure = error instanceof Error ? error.message : String(error);
    throw error;
  } finally {
    await host.shutdown({ status, error: failure, unsettled: host.pending.unsettled() });
  }
  return writeReport(config, options, { ...result, repeats, started });
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
