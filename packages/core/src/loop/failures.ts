import type { Trajectory } from "../types.ts";

/** Rollout and sample counts of a whole run (the end-of-run summary line reads these). */
export interface RunTotals {
  rolloutsOk: number;
  rolloutsFailed: number;
  /** Samples handed to the trainer. */
  samplesTrained: number;
  /** Weight updates the trainer returned (set by the orchestrator): 0 for a trainer that trains nothing ("none"). */
  weightUpdates?: number;
}

/**
 * Counts rollouts and samples per step and watches for a run that cannot train: a step without a sample whose
 * rollouts all failed or ended before their first turn (a first prompt longer than the context window ends every
 * rollout of every step there), `maxFailedSteps` times in a row. Remembers why, so the stop message names the cause
 * counted most.
 * @example
 * const watch = new FailureWatch(3);
 * const stop = watch.record(trajectories, batch.samples.length); // a message once 3 steps in a row failed
 */
export class FailureWatch {
  readonly totals: RunTotals = { rolloutsOk: 0, rolloutsFailed: 0, samplesTrained: 0 };
  private streak = 0;
  private causes = new Map<string, { text: string; count: number }>();
  private failedInStreak = 0;
  private beforeFirstTurn = false;

  constructor(private readonly maxFailedSteps: number) {}

  /** Records one step; returns why the run must stop, or undefined. */
  record(trajectories: Trajectory[], samples: number): string | undefined {
    const failed = trajectories.filter((t) => t.stopReason === "failed");
    this.totals.rolloutsFailed += failed.length;
    this.totals.rolloutsOk += trajectories.length - failed.length;
    this.totals.samplesTrained += samples;
    // a rollout that ended before its first turn gives no sample either: for every example of the step, it will again
    const lost = trajectories.filter((t) => t.stopReason === "failed" || t.turns.length === 0);
    const allLost = samples === 0 && trajectories.length > 0 && lost.length === trajectories.length;
    if (!allLost) {
      this.streak = 0;
      this.causes.clear();
      this.failedInStreak = 0;
      this.beforeFirstTurn = false;
      return undefined;
    }
    this.streak++;
    this.failedInStreak += lost.length;
    if (lost.length > failed.length) this.beforeFirstTurn = true;
    for (const t of lost) {
      const text =
        t.stopReason === "failed"
          ? (t.error ?? "no error recorded")
          : `ended before its first turn (${t.stopReason ?? "no stop reason"}${t.stopReason === "context_length" ? ": the first prompt does not fit the model's context window; raise [model] max_model_len or shorten the prompt" : ""})`;
      const key = text.replace(/\d+/g, "N");
      const entry = this.causes.get(key) ?? { text, count: 0 };
      entry.count++;
      this.causes.set(key, entry);
    }
    if (this.maxFailedSteps === 0 || this.streak < this.maxFailedSteps) return undefined;
    const top = [...this.causes.values()].sort((a, b) => b.count - a.count)[0];
    const what = this.beforeFirstTurn ? "failed or ended before its first turn" : "failed";
    return (
      `every rollout ${what} in ${this.streak} step(s) in a row (orchestrator.max_failed_steps = ${this.maxFailedSteps}), ` +
      `so nothing can be trained; the cause counted most (${top?.count ?? 0} of ${this.failedInStreak} rollouts): ` +
      `${top?.text ?? "unknown"}`
    );
  }
}
