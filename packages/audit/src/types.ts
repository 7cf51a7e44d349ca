import type { Logger, OrchestratorConfig, PluginHost, ResolvedPlugin, Trajectory, Turn } from "@air/core";

/** Which of the audit's four parts a probe belongs to. */
export type ProbeGroup = "baseline" | "trivial" | "cheat" | "metric";

/**
 * A probe's outcome. Cheating probes: `held` / `broken`. Trivial submissions: `ok` (below the baseline or
 * refused) / `flagged` (reaches the baseline). Baseline and metric checks: `ok` / `warn` / `flagged`. `n/a` when
 * the probe does not apply to the task; `error` when its rollout failed.
 */
export type Verdict = "held" | "broken" | "ok" | "flagged" | "warn" | "n/a" | "error";

/** One line of the audit: a probe of a task, its verdict and the evidence. */
export interface Finding {
  task: string;
  probe: string;
  group: ProbeGroup;
  verdict: Verdict;
  /** A leak or a forgeable score: `bun run audit` exits 1. */
  critical: boolean;
  /** The priority metric's score the probe got, when it got one. */
  score?: number;
  evidence: string;
  /** Tamper flags the env's monitor set on the probe's turns (what training would have flagged). */
  tamper?: string[];
}

/** What one probe rollout returned: its turns (one per scripted command) or why it failed. */
export interface ProbeRun {
  turns: Turn[];
  error?: string;
}

/**
 * A probe's rollout as the audit judges it: its turns, and the error when it failed.
 * @example probeRun(await scriptedRollout({ ... })) // { turns: [...], error: undefined }
 */
export function probeRun(t: Trajectory): ProbeRun {
  return { turns: t.turns, error: t.stopReason === "failed" ? (t.error ?? "rollout failed") : undefined };
}

/** What an env's audit (`auditMlgym`, `auditHarbor`) gets: the one host of the audit and the config's parts. */
export interface AuditContext {
  /** Creates the env and the probes' scripted policies; closed by `auditConfig`. */
  host: Pick<PluginHost, "create" | "bus" | "signal" | "pending">;
  log: Logger;
  /** The config's `[env]`. */
  env: ResolvedPlugin<"env">;
  /** The TOML's directory (relative paths in `[env]`). */
  configDir: string;
  orchestrator: OrchestratorConfig;
  /** Baseline (oracle) repeats per task. */
  repeats: number;
  /** Probe rollouts at a time. */
  concurrency: number;
  /** Only these tasks (names or ids as the config uses them); default every train and eval task. */
  tasks?: string[];
}

/** An env's audit: the findings, the tasks probed (in order) and the runtime they ran on. */
export interface AuditResult {
  findings: Finding[];
  tasks: string[];
  runtime: string;
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
