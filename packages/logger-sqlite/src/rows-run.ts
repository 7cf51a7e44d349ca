import type { EventHandlers } from "@air/core";
import type { EvaluationResult } from "./evaluations.ts";

type Payload<K extends keyof EventHandlers> = Parameters<EventHandlers[K]>[0];

/** The `metrics` rows of `values` at `step` (finite values only). */
export function metricRowsOf(
  runId: number,
  step: number,
  values: Record<string, number>,
  source: "step" | "trainer" | "eval",
) {
  return Object.entries(values)
    .filter(([, value]) => Number.isFinite(value))
    .map(([name, value]) => ({ runId, step, name, value, source }));
}

/**
 * An eval's `evaluations` rows: each task's `eval/<task>/reward/mean` and "all" (`eval/reward/mean`), for `v<version>`.
 * @example evaluationRows(3, 2, { "eval/a/reward/mean": 0.5, "eval/reward/mean": 0.5 }) // [{ task: "a", … }, { task: "all", … }]
 */
export function evaluationRows(step: number, policyVersion: number, metrics: Record<string, number>) {
  const policy = `v${policyVersion}`;
  const rows: EvaluationResult[] = [];
  for (const [name, value] of Object.entries(metrics)) {
    const m = /^eval\/(.+)\/reward\/mean$/.exec(name);
    if (m) rows.push({ task: m[1]!, policy, step, metric: "reward/mean", value });
  }
  rows.push({ task: "all", policy, step, metric: "reward/mean", value: metrics["eval/reward/mean"] ?? 0 });
  return rows;
}

/** The `sandboxes` row of a sandbox:state event. */
export function sandboxRow(runId: number, e: Payload<"sandbox:state">) {
  return {
    runId,
    sandboxId: e.id,
    rolloutId: e.rolloutId ?? null,
    state: e.state,
    command: e.command ?? null,
    host: e.host ?? null,
    updatedAt: Date.now(),
  };
}

/** The `processes` row of a process:state event. */
export function processRow(runId: number, e: Payload<"process:state">) {
  return {
    runId,
    role: e.role,
    pid: e.pid ?? null,
    state: e.state,
    logPath: e.logPath ?? null,
    updatedAt: Date.now(),
  };
}
