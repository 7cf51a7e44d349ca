import { type CheckResult, fail, ok } from "./check-result.ts";
import {
  type GpuInfo,
  type GpuMap,
  parseVisibleDevices,
  queryGpuProcesses,
  queryGpus,
  resolveGpuMap,
  wantsGpus,
} from "./gpus.ts";
import { inferenceKind, processContext } from "./process-kinds.ts";
import type { RunConfig } from "./sections.ts";

/** Memory (MiB) a GPU must have free for its role, or 0 when the role needs none checked. */
function neededMib(config: RunConfig, role: keyof GpuMap, gpu: GpuInfo): number {
  const { trainer_process: tp, deployment } = config.root;
  const server = inferenceKind(config);
  if (role === "inference" && server?.gpuMemoryFraction)
    return Math.ceil(server.gpuMemoryFraction(processContext(config, "inference")) * gpu.memoryTotalMib);
  if (role === "trainer" && tp.kind !== "none")
    return Math.ceil(deployment.min_free_memory_fraction * gpu.memoryTotalMib);
  return 0;
}

/**
 * GPU checks: nvidia-smi answers, the requested GPUs exist (counts resolved against CUDA_VISIBLE_DEVICES
 * or every GPU), and each has the free memory its role needs; when not, names the PIDs holding memory.
 * Returns no check when the config asks for no GPU.
 * @example checkGpus(config, { ...process.env, PATH: `${fakeBin}:${process.env.PATH}` })
 */
export function checkGpus(config: RunConfig, env: NodeJS.ProcessEnv): CheckResult[] {
  const { deployment } = config.root;
  if (!wantsGpus(deployment) || deployment.device === "cpu") return [];
  let gpus: GpuInfo[];
  try {
    gpus = queryGpus(env);
  } catch (error) {
    return [fail("GPUs visible", `the config asks for GPUs, but ${(error as Error).message}`)];
  }
  const indices = gpus.map((g) => g.index);
  const visible = parseVisibleDevices(env.CUDA_VISIBLE_DEVICES) ?? indices;
  let map: GpuMap;
  try {
    map = resolveGpuMap(deployment, visible);
  } catch (error) {
    return [fail("GPU map", (error as Error).message)];
  }
  const out: CheckResult[] = [];
  const missing = [...map.inference, ...map.trainer, ...map.env].filter((id) => !indices.includes(id));
  if (missing.length > 0) {
    out.push(
      fail(
        "requested GPUs exist",
        `GPU(s) ${missing.join(", ")} requested, but this machine has ${gpus.length} GPU(s)` +
          (indices.length ? ` (${indices.join(", ")})` : ""),
      ),
    );
    return out;
  }
  out.push(
    ok("requested GPUs exist", `inference [${map.inference}], trainer [${map.trainer}], env [${map.env}]`),
  );
  let holders: ReturnType<typeof queryGpuProcesses> = [];
  try {
    holders = queryGpuProcesses(env);
  } catch {}
  for (const role of ["inference", "trainer"] as const) {
    for (const id of map[role]) {
      const gpu = gpus.find((g) => g.index === id) as GpuInfo;
      const need = neededMib(config, role, gpu);
      if (need === 0) continue;
      const name = `GPU ${id} free memory (${role})`;
      if (gpu.memoryFreeMib >= need) {
        out.push(ok(name, `${gpu.memoryFreeMib} MiB free, ${need} MiB needed`));
        continue;
      }
      const held = holders
        .filter((h) => h.gpuUuid === gpu.uuid)
        .map((h) => `pid ${h.pid} (${h.name || "?"}, ${h.usedMemoryMib} MiB)`);
      out.push(
        fail(
          name,
          `${gpu.memoryFreeMib} MiB free of ${gpu.memoryTotalMib}, ${need} MiB needed; ` +
            (held.length ? `held by ${held.join(", ")}` : "no process listed by nvidia-smi holds it") +
            "; stop those processes (an earlier air run: `rl clean <output_dir>`)",
        ),
      );
    }
  }
  return out;
}
