import type { EventHandlers } from "@air/core";

/**
 * When a step counts as done for `--resume`: once the trainer's weights for it arrived (`weights:updated`), not
 * at `step:end` — a crash between the two would make a resumed run skip a step whose batch the trainer never
 * trained on, or wait for weights that never come. A step whose trainer returned no weights (an empty batch, or
 * no trainer) is done when the next step ends or the run completes, since the loop only moves on once its wait is
 * over. A run that failed or was aborted records nothing more: its last step may have ended without its batch
 * reaching the trainer (a full disk failed the batch write once, and `--resume` then skipped the step).
 * @example const hooks = progressRecorder((step, metrics) => writeProgress(runDir, { lastCompletedStep: step, ... }));
 */
export function progressRecorder(
  record: (step: number, metrics: Record<string, number>) => void,
): Partial<EventHandlers> {
  let pending: { step: number; metrics: Record<string, number> } | undefined;
  const flush = (extra: Record<string, number> = {}) => {
    if (!pending) return;
    record(pending.step, { ...pending.metrics, ...extra });
    pending = undefined;
  };
  return {
    "step:end": (e) => {
      flush();
      pending = { step: e.step, metrics: { ...e.metrics } };
    },
    "weights:updated": (e) => flush(e.metrics),
    "run:end": (e) => {
      if (e.status === "completed") flush();
      pending = undefined;
    },
  };
}
