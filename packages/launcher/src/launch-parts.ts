import { join } from "node:path";
import type { RunSummary } from "@air/core";
import { type GpuMap, parseVisibleDevices, queryGpus, resolveGpuMap } from "./gpus.ts";
import type { RunConfig } from "./sections.ts";

/**
 * The run's GPU map: explicit ids, or counts taken in order from CUDA_VISIBLE_DEVICES (or every GPU); with
 * `[deployment] device = "cpu"` counts are numbered 0, 1, … (they only size the processes).
 */
export function gpuMapFor(config: RunConfig, env: NodeJS.ProcessEnv): GpuMap {
  const { deployment: d } = config.root;
  const counts = d.num_infer_gpus !== undefined || d.num_train_gpus !== undefined;
  const cpu = () => Array.from({ length: (d.num_infer_gpus ?? 0) + (d.num_train_gpus ?? 0) }, (_, i) => i);
  const visible = !counts
    ? []
    : d.device === "cpu"
      ? cpu()
      : (parseVisibleDevices(env.CUDA_VISIBLE_DEVICES) ?? queryGpus(env).map((g) => g.index));
  return resolveGpuMap(d, visible);
}

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

/** A multi-node trainer rank other than 0: that machine runs only its trainer process. */
export function isTrainerWorker(config: RunConfig): boolean {
  const { trainer_process: tp } = config.root;
  return tp.kind !== "none" && tp.nnodes > 1 && tp.node_rank > 0;
}

/**
 * Where this launcher keeps its own state (pid file, child logs, resolved config): the run dir on the master
 * (node_rank 0), `<run dir>/nodes/node_<rank>` on a trainer worker node, so a worker sharing the output dir
 * (NFS, as the broadcasts need) never overwrites or removes the master's files.
 * @example nodeStateDir(config) // "/abs/outputs/run/nodes/node_1"
 */
export function nodeStateDir(config: RunConfig): string {
  if (!isTrainerWorker(config)) return config.runDir;
  return join(config.runDir, "nodes", `node_${config.root.trainer_process.node_rank}`);
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
