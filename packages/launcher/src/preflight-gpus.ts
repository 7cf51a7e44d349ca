import { type CheckResult, fail, ok } from "./check-result.ts";
import { type GpuInfo, type GpuMap, type GpuPlan, queryGpuProcesses, queryGpus, wantsGpus } from "./gpus.ts";
import type { RunPlan } from "./run-plan.ts";

/** Memory (MiB) a GPU must have free for its role, or 0 when the role needs none checked. */
function neededMib(run: RunPlan, role: keyof GpuMap, gpu: GpuInfo): number {
  const { deployment } = run.config.root;
  const server = run.inference;
  if (role === "inference" && server?.kind.gpuMemoryFraction)
    return Math.ceil(server.kind.gpuMemoryFraction(server.ctx) * gpu.memoryTotalMib);
  if (role === "trainer" && run.trainer)
    return Math.ceil(deployment.min_free_memory_fraction * gpu.memoryTotalMib);
  return 0;
}

/**
 * GPU checks: nvidia-smi answers, the plan's GPUs (`planGpus`: counts resolved against CUDA_VISIBLE_DEVICES
 * or every GPU) exist, and each has the free memory its role needs; when not, names the PIDs holding memory.
 * Returns no check when the config asks for no GPU.
 * @example checkGpus(plan, planGpus(plan.config.root.deployment, env), { ...process.env, PATH: `${fakeBin}:${process.env.PATH}` })
 */
export function checkGpus(run: RunPlan, planned: GpuPlan, env: NodeJS.ProcessEnv): CheckResult[] {
  const { deployment } = run.config.root;
  if (!wantsGpus(deployment) || deployment.device === "cpu") return [];
  let gpus: GpuInfo[];
  try {
    gpus = queryGpus(env);
  } catch (error) {
    return [fail("GPUs visible", `the config asks for GPUs, but ${(error as Error).message}`)];
  }
  const indices = gpus.map((g) => g.index);
  if (planned.problem) return [fail("GPU map", planned.problem)];
  const { map } = planned;
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
      const need = neededMib(run, role, gpu);
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
