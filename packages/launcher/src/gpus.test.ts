import { describe, expect, test } from "bun:test";
import { parseVisibleDevices, planGpus, resolveGpuMap } from "./gpus.ts";
import { deploymentSection } from "./sections.ts";

const d = (value: Record<string, unknown>) => deploymentSection.parse(value);

describe("GPU map", () => {
  test("explicit lists are kept", () => {
    expect(
      resolveGpuMap(d({ inference_gpu_ids: [0], trainer_gpu_ids: [2, 3], env_gpu_ids: [7] }), []),
    ).toEqual({
      inference: [0],
      trainer: [2, 3],
      env: [7],
    });
  });

  test("counts take visible GPUs in order, inference first, skipping listed ones", () => {
    expect(
      resolveGpuMap(d({ num_infer_gpus: 1, num_train_gpus: 2, env_gpu_ids: [4] }), [4, 5, 6, 7]),
    ).toEqual({
      inference: [5],
      trainer: [6, 7],
      env: [4],
    });
    expect(() => resolveGpuMap(d({ num_infer_gpus: 2, num_train_gpus: 2 }), [0, 1, 2])).toThrow(
      "num_train_gpus = 2, but only 1 GPU(s) are left",
    );
  });

  test("lists must be disjoint; a count and a list for the same part conflict", () => {
    expect(deploymentSection.safeParse({ inference_gpu_ids: [1], env_gpu_ids: [1] }).success).toBe(false);
    expect(deploymentSection.safeParse({ trainer_gpu_ids: [1, 1] }).success).toBe(false);
    expect(deploymentSection.safeParse({ num_infer_gpus: 1, inference_gpu_ids: [0] }).success).toBe(false);
  });

  test("CUDA_VISIBLE_DEVICES parsing", () => {
    expect(parseVisibleDevices(undefined)).toBeUndefined();
    expect(parseVisibleDevices("2, 0,3")).toEqual([2, 0, 3]);
    expect(parseVisibleDevices("")).toEqual([]);
  });
});

describe("the launch's GPU plan", () => {
  const none = { PATH: "/nonexistent" };
  test("counts come from CUDA_VISIBLE_DEVICES, or are numbered on cpu; explicit ids need no nvidia-smi", () => {
    const counts = d({ num_infer_gpus: 1, num_train_gpus: 2 });
    expect(planGpus(counts, { ...none, CUDA_VISIBLE_DEVICES: "5,6,7" })).toEqual({
      map: { inference: [5], trainer: [6, 7], env: [] },
    });
    expect(planGpus({ ...counts, device: "cpu" }, none).map).toEqual({
      inference: [0],
      trainer: [1, 2],
      env: [],
    });
    expect(planGpus(d({ trainer_gpu_ids: [3] }), none)).toEqual({
      map: { inference: [], trainer: [3], env: [] },
    });
  });

  test("a map that cannot be made is the plan's problem, not a throw", () => {
    const counts = d({ num_train_gpus: 2 });
    expect(planGpus(counts, { ...none, CUDA_VISIBLE_DEVICES: "0" }).problem).toContain(
      "num_train_gpus = 2, but only 1 GPU(s) are left",
    );
    expect(planGpus(counts, none).problem).toContain("nvidia-smi not found on PATH");
  });
});
