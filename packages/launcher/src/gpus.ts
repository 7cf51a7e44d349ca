import { spawnSync } from "node:child_process";
import type { DeploymentConfig } from "./sections.ts";

/** One GPU as nvidia-smi reports it (memory in MiB). */
export interface GpuInfo {
  index: number;
  uuid: string;
  name: string;
  memoryTotalMib: number;
  memoryUsedMib: number;
  memoryFreeMib: number;
}

/** A process holding GPU memory. */
export interface GpuProcess {
  gpuUuid: string;
  pid: number;
  usedMemoryMib: number;
  name: string;
}

/** Which physical GPUs each part of a run gets, after counts were turned into ids. */
export interface GpuMap {
  inference: number[];
  trainer: number[];
  env: number[];
}

/**
 * Turns `[deployment]` into GPU ids: explicit lists are kept; `num_infer_gpus` / `num_train_gpus` take
 * GPUs in order from `visible` (inference first, then trainer), skipping ids another list already holds.
 * Throws when there are not enough visible GPUs.
 * @example resolveGpuMap({ num_infer_gpus: 1, num_train_gpus: 2, ... }, [0, 1, 2, 3]) // inference [0], trainer [1, 2]
 */
export function resolveGpuMap(d: DeploymentConfig, visible: number[]): GpuMap {
  const taken = new Set([...d.inference_gpu_ids, ...d.trainer_gpu_ids, ...d.env_gpu_ids]);
  const free = visible.filter((id) => !taken.has(id));
  const take = (n: number | undefined, what: string): number[] => {
    if (n === undefined) return [];
    if (free.length < n)
      throw new Error(
        `${what} = ${n}, but only ${free.length} GPU(s) are left of the visible ${JSON.stringify(visible)}`,
      );
    return free.splice(0, n);
  };
  const inference = d.inference_gpu_ids.length
    ? d.inference_gpu_ids
    : take(d.num_infer_gpus, "num_infer_gpus");
  const trainer = d.trainer_gpu_ids.length ? d.trainer_gpu_ids : take(d.num_train_gpus, "num_train_gpus");
  return { inference, trainer, env: d.env_gpu_ids };
}

/** The GPUs a launch gives each part, planned once before preflight: the map, or why there is none. */
export interface GpuPlan {
  /** The ids each part gets (all empty when `problem` is set). */
  readonly map: GpuMap;
  /** Why the ids cannot be given: too few visible GPUs, nvidia-smi missing (preflight fails "GPU map"). */
  readonly problem?: string;
}

/**
 * The run's GPU map: explicit ids, or counts taken in order from CUDA_VISIBLE_DEVICES (or every GPU nvidia-smi
 * lists); with `device = "cpu"` counts are numbered 0, 1, … (they only size the processes).
 * @example planGpus(config.root.deployment, { CUDA_VISIBLE_DEVICES: "2,3" }).map.inference // [2] with num_infer_gpus = 1
 */
export function planGpus(d: DeploymentConfig, env: NodeJS.ProcessEnv): GpuPlan {
  const counts = d.num_infer_gpus !== undefined || d.num_train_gpus !== undefined;
  const cpu = () => Array.from({ length: (d.num_infer_gpus ?? 0) + (d.num_train_gpus ?? 0) }, (_, i) => i);
  try {
    const visible = !counts
      ? []
      : d.device === "cpu"
        ? cpu()
        : (parseVisibleDevices(env.CUDA_VISIBLE_DEVICES) ?? queryGpus(env).map((g) => g.index));
    return { map: resolveGpuMap(d, visible) };
  } catch (error) {
    return { map: { inference: [], trainer: [], env: [] }, problem: (error as Error).message };
  }
}

/** True when the deployment asks for any GPU. */
export function wantsGpus(d: DeploymentConfig): boolean {
  return (
    d.inference_gpu_ids.length + d.trainer_gpu_ids.length + d.env_gpu_ids.length > 0 ||
    (d.num_infer_gpus ?? 0) > 0 ||
    (d.num_train_gpus ?? 0) > 0
  );
}

/** Parses `CUDA_VISIBLE_DEVICES` ("0,2,3") into ids, or undefined when unset. */
export function parseVisibleDevices(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => /^\d+$/.test(s))
    .map(Number);
}

function runNvidiaSmi(args: string[], env: NodeJS.ProcessEnv): string {
  const out = spawnSync("nvidia-smi", args, { env, encoding: "utf8", timeout: 15_000 });
  if (out.error) {
    const code = (out.error as NodeJS.ErrnoException).code;
    throw new Error(
      code === "ENOENT"
        ? "nvidia-smi not found on PATH (no NVIDIA driver on this machine?)"
        : out.error.message,
    );
  }
  if (out.status !== 0) throw new Error(`nvidia-smi failed (exit ${out.status}): ${out.stderr.trim()}`);
  return out.stdout;
}

function csvRows(text: string): string[][] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => l.split(",").map((c) => c.trim()));
}

/**
 * Lists GPUs with nvidia-smi (found on `env.PATH`).
 * @example const gpus = queryGpus(process.env);
 */
export function queryGpus(env: NodeJS.ProcessEnv = process.env): GpuInfo[] {
  const text = runNvidiaSmi(
    ["--query-gpu=index,uuid,name,memory.total,memory.used,memory.free", "--format=csv,noheader,nounits"],
    env,
  );
  return csvRows(text).map(([index, uuid, name, total, used, free]) => ({
    index: Number(index),
    uuid: uuid ?? "",
    name: name ?? "",
    memoryTotalMib: Number(total),
    memoryUsedMib: Number(used),
    memoryFreeMib: Number(free),
  }));
}

/** Lists processes holding GPU memory, with nvidia-smi. */
export function queryGpuProcesses(env: NodeJS.ProcessEnv = process.env): GpuProcess[] {
  const text = runNvidiaSmi(
    ["--query-compute-apps=gpu_uuid,pid,used_memory,process_name", "--format=csv,noheader,nounits"],
    env,
  );
  return csvRows(text)
    .filter((r) => r.length >= 3 && /^\d+$/.test(r[1] ?? ""))
    .map(([gpuUuid, pid, used, name]) => ({
      gpuUuid: gpuUuid ?? "",
      pid: Number(pid),
      usedMemoryMib: Number(used),
      name: name ?? "",
    }));
}
