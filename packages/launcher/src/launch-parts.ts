import type { RunSummary } from "@air/core";
import type { RunConfig } from "./sections.ts";

/** Every plugin section as `{ plugin, config }`, for `config.resolved.json`. */
export function pluginSpecs(config: RunConfig): Record<string, unknown> {
  const p = config.plugins;
  const one = (x: { spec: string; config: unknown }) => ({ plugin: x.spec, config: x.config });
  return {
    env: one(p.env),
    policy: one(p.policy),
    trainer: one(p.trainer),
    advantage: one(p.advantage),
    strategy: one(p.strategy),
    rewards: p.rewards.map((r) => ({ ...one(r), name: r.name, weight: r.weight })),
    loggers: p.loggers.map(one),
  };
}

/**
 * Waits for the run; once `signal` aborts, waits at most `timeoutMs` more (or not at all once `force` aborts), then
 * calls `onGiveUp` and resolves with an aborted summary while the orchestrator may still be winding down.
 */
export async function untilStopped(
  running: Promise<RunSummary>,
  signal: AbortSignal,
  timeoutMs: number,
  force?: AbortSignal,
  onGiveUp?: () => void,
): Promise<RunSummary> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let settled = false;
  const gaveUp = new Promise<RunSummary>((resolve) => {
    const giveUp = () => {
      if (settled) return;
      onGiveUp?.();
      resolve({
        status: "aborted",
        stepsCompleted: 0,
        error: "the orchestrator did not stop in time",
        unsettled: [],
        peakConcurrentRollouts: 0,
      });
    };
    const arm = () => {
      timer = setTimeout(giveUp, timeoutMs);
    };
    if (signal.aborted) arm();
    else signal.addEventListener("abort", arm, { once: true });
    force?.addEventListener("abort", giveUp, { once: true });
  });
  try {
    return await Promise.race([running, gaveUp]);
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}
