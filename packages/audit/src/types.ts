import type { Turn } from "@air/core";

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
