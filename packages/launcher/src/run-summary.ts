import type { RunSummary } from "@air/core";

/**
 * The one line `rl` ends with, and whether the run counts as a success: it must have completed and, when it ran a
 * step, trained at least one sample (a run whose rollouts all failed, or produced nothing trainable, exits non-zero).
 * @example summaryLine({ status: "completed", stepsCompleted: 2, unsettled: [], peakConcurrentRollouts: 8,
 *   totals: { rolloutsOk: 16, rolloutsFailed: 0, samplesTrained: 16 } }) // { ok: true, line: "run completed: 2 step(s), …" }
 */
export function summaryLine(summary: RunSummary): { ok: boolean; line: string } {
  const t = summary.totals;
  // A trainer that returned no weights all run (trainer "none") trained nothing, whatever it was handed.
  const untrained = t?.weightUpdates === 0 && t.samplesTrained > 0;
  const samples = untrained
    ? `${t.samplesTrained} sample(s) built, none trained (the trainer returned no weights)`
    : `${t?.samplesTrained} sample(s) trained`;
  const counts = t ? `, rollouts ${t.rolloutsOk} ok / ${t.rolloutsFailed} failed, ${samples}` : "";
  // A resume with no step left (it may only run the eval a crash cut short) had nothing to train.
  const nothing =
    summary.status === "completed" && summary.stepsCompleted > 0 && t !== undefined && t.samplesTrained === 0;
  const why = summary.error
    ? `: ${summary.error}`
    : nothing
      ? t.rolloutsOk === 0 && t.rolloutsFailed > 0
        ? ": nothing was trained (every rollout failed; see the errors above)"
        : ": nothing was trained (no rollout gave a trainable sample)"
      : "";
  const status = nothing ? "failed" : summary.status;
  return {
    ok: summary.status === "completed" && !nothing,
    line: `run ${status}: ${summary.stepsCompleted} step(s)${counts}${why}`,
  };
}
