import { existsSync, readFileSync } from "node:fs";
import { sleep } from "@air/core";

/** prime-rl metric keys and the short names air reports them under (prefixed `trainer/`). */
const SHORT_NAMES: Record<string, string> = {
  "loss/mean": "loss",
  "optim/grad_norm": "grad_norm",
  "entropy/all/mean": "entropy",
  "optim/lr": "lr",
  "mismatch_kl/all/mean": "mismatch_kl",
  "mismatch/abs_logprob_diff/mean": "mismatch",
};

/**
 * Reads the rows of `step` from a metrics JSONL file in prime-rl's FileMonitor format (one object per line,
 * `{"step": N, "time": t, ...metrics}`; a step may have several rows) and merges them. Returns air names:
 * `trainer/loss`, `trainer/grad_norm`, `trainer/entropy`, `trainer/lr`, `trainer/mismatch_kl`,
 * `trainer/mismatch` (mean |trainer − inference logprob|, tiny only), and `trainer/<key>` for every other number.
 * @example readStepMetrics("/out/metrics.jsonl", 3) // { "trainer/loss": 0.12, ... } or null
 */
export function readStepMetrics(file: string, step: number): Record<string, number> | null {
  if (!existsSync(file)) return null;
  let found = false;
  const out: Record<string, number> = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof row !== "object" || row === null || (row as { step?: unknown }).step !== step) continue;
    found = true;
    for (const [key, value] of Object.entries(row)) {
      if (key === "step" || key === "time" || typeof value !== "number") continue;
      out[`trainer/${SHORT_NAMES[key] ?? key}`] = value;
    }
  }
  return found ? out : null;
}

/** What waiting for a step's metrics row found: the step's metrics, and why `trainer/loss` is not among them. */
export interface StepMetricsWait {
  metrics: Record<string, number> | null;
  /** Set when the row with `loss/mean` did not come: what ended the wait (the plugin warns with it). */
  missing?: string;
}

/**
 * Waits for the metrics of `step` to contain `trainer/loss`. prime-rl's trainer (`trainer/rl/train.py`) writes
 * STABLE for step N, then saves checkpoint N (minutes for a multi-GB save), then logs N's rows, and only then
 * trains N + 1: so the row is awaited until it appears or `nextStepStarted()` (the next step's STABLE) is true —
 * then read once more, as the row came before it — bounded by `waitMs`. Returns what is there then, with
 * `missing` saying why the loss is not. Returns at once with no metrics when the file does not exist (a trainer
 * without `[monitors.file]`; prime-rl's FileMonitor creates the file when it starts).
 * @example await waitForStepMetrics("/out/metrics.jsonl", 3, { waitMs: 1_800_000, pollMs: 100, nextStepStarted })
 */
export async function waitForStepMetrics(
  file: string,
  step: number,
  options: { waitMs: number; pollMs: number; signal?: AbortSignal; nextStepStarted?: () => boolean },
): Promise<StepMetricsWait> {
  if (!existsSync(file)) return { metrics: null };
  const deadline = Date.now() + options.waitMs;
  const hasLoss = (m: Record<string, number> | null) => m !== null && "trainer/loss" in m;
  for (;;) {
    const metrics = readStepMetrics(file, step);
    if (hasLoss(metrics)) return { metrics };
    if (options.nextStepStarted?.()) {
      const again = readStepMetrics(file, step);
      if (hasLoss(again)) return { metrics: again };
      return {
        metrics: again,
        missing: `step ${step + 1}'s weights came without a loss/mean row for step ${step}`,
      };
    }
    if (Date.now() >= deadline)
      return {
        metrics,
        missing: `no loss/mean row for step ${step} within metrics_wait_ms = ${options.waitMs}`,
      };
    await sleep(Math.min(options.pollMs, Math.max(1, deadline - Date.now())), options.signal);
  }
}
