import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DockerHostsOptions, TaskFiles } from "@air/sandbox";

/**
 * A small MLGym-style task bundle in a temp dir: a ~100 KB CSV and a baseline script in `workspace/`, an
 * evaluation script in `evaluation/`. The caller removes `files.dir`.
 * @example const files = benchTaskFiles(); … rmSync(files.dir, { recursive: true, force: true });
 */
export function benchTaskFiles(): TaskFiles {
  const dir = mkdtempSync(join(tmpdir(), "air-bench-task-"));
  mkdirSync(join(dir, "workspace", "data"), { recursive: true });
  mkdirSync(join(dir, "evaluation"), { recursive: true });
  const rows = ["id,x1,x2,y"];
  for (let i = 0; rows.join("\n").length < 100_000; i++)
    rows.push(`${i},${(i * 0.37) % 1},${(i * 0.73) % 1},${i % 2}`);
  writeFileSync(join(dir, "workspace", "data", "train.csv"), `${rows.join("\n")}\n`);
  writeFileSync(join(dir, "workspace", "baseline.py"), "print('baseline')\n");
  writeFileSync(join(dir, "evaluation", "evaluate.py"), "import json\nprint(json.dumps({'Score': 0.5}))\n");
  return { key: `bench-${Date.now().toString(36)}`, dir, readOnly: ["data"] };
}

/** The image the container benchmarks run `benchTaskFiles` in (`AIR_TEST_IMAGE` to change it). */
export const BENCH_IMAGE = process.env.AIR_TEST_IMAGE ?? "air-mlgym-test:latest";

/**
 * The sandbox every container benchmark measures: the test image as `agent`, 1 CPU, 1 GiB, 256 pids, no network.
 * @example new DockerRuntime({ ...benchBox(runName), docker, gpuIds: [], poolSize: 2 })
 */
export function benchBox(runName: string): DockerHostsOptions["base"] {
  return {
    image: BENCH_IMAGE,
    user: "agent",
    workspace: "/home/agent/workspace",
    memoryMb: 1024,
    cpus: 1,
    pidsLimit: 256,
    network: "none",
    runName,
    timeoutMs: 60_000,
  };
}
