/**
 * Measures the runtimes on this machine (not a test): command round-trip through the persistent shell,
 * warm reset (a pooled container handed out again) and cold create + start + first shell + workspace.
 * Usage: bun packages/env-mlgym/bench/measure-runtime.ts [--image air-mlgym-test:latest] [--n 20]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Runtime, TaskFiles } from "@air/sandbox";
import { DockerRuntime, LocalRuntime, removeContainersByLabel } from "@air/sandbox";
import { buildTaskFiles } from "../src/bundle.ts";
import { loadTask } from "../src/task.ts";
import { REPO_ROOT } from "../src/testing/context.ts";

const { values } = parseArgs({
  options: {
    image: { type: "string", default: "air-mlgym-test:latest" },
    n: { type: "string", default: "20" },
  },
});
const n = Number(values.n);

function quantiles(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => (s[Math.min(s.length - 1, Math.floor(p * s.length))] as number).toFixed(2);
  return `p50 ${q(0.5)} ms, p90 ${q(0.9)} ms (n=${s.length})`;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function execRoundTrips(runtime: Runtime, files: TaskFiles, label: string): Promise<void> {
  const sandbox = await runtime.acquire(files, { rolloutId: `measure-${label}` });
  for (const command of ["true", "echo hi", "ls -l"]) {
    const samples: number[] = [];
    for (let i = 0; i < n * 10; i++) samples.push(await time(() => sandbox.exec(command, 10_000)));
    console.log(`${label} exec \`${command}\`: ${quantiles(samples)}`);
  }
  const evals: number[] = [];
  await sandbox.exec("python train.py --model linear", 60_000);
  for (let i = 0; i < Math.min(n, 10); i++) {
    evals.push(
      await time(() =>
        sandbox.evaluate({
          command: "python evaluate.py --submission_file submission.csv",
          timeoutMs: 30_000,
        }),
      ),
    );
  }
  console.log(`${label} evaluation (copy + pristine files + evaluate.py): ${quantiles(evals)}`);
  await runtime.release(sandbox, true);
}

const task = await loadTask(REPO_ROOT, "apartmentRent");
const cache = mkdtempSync(join(tmpdir(), "air-measure-"));
const files = await buildTaskFiles(task, cache);
const runName = `air-measure-${process.pid}`;
try {
  const local = new LocalRuntime({ root: join(cache, "local"), python: "/usr/bin/python3" });
  const localAcquire: number[] = [];
  for (let i = 0; i < n; i++) {
    localAcquire.push(
      await time(async () => local.release(await local.acquire(files, { rolloutId: `l${i}` }))),
    );
  }
  console.log(`local acquire + release (copy workspace, start bash): ${quantiles(localAcquire)}`);
  await execRoundTrips(local, files, "local");
  await local.close();

  const options = {
    image: values.image as string,
    user: "agent",
    workspace: "/home/agent/workspace",
    memoryMb: 2048,
    cpus: 1,
    pidsLimit: 512,
    network: "none",
    gpuIds: [],
    runName,
    timeoutMs: 60_000,
  };
  const cold = new DockerRuntime({ ...options, poolSize: 0 });
  await cold.release(await cold.acquire(files, { rolloutId: "warmup" }), true);
  const coldMs: number[] = [];
  for (let i = 0; i < Math.min(n, 10); i++) {
    let box: Awaited<ReturnType<typeof cold.acquire>> | undefined;
    coldMs.push(
      await time(async () => {
        box = await cold.acquire(files, { rolloutId: `c${i}` });
      }),
    );
    if (box) await cold.release(box, true);
  }
  console.log(
    `docker cold acquire (create + start + root shell + bundle + reset + agent shell): ${quantiles(coldMs)}`,
  );
  await cold.close();

  const warm = new DockerRuntime({ ...options, poolSize: 1 });
  await warm.release(await warm.acquire(files, { rolloutId: "w" }));
  const warmMs: number[] = [];
  const releaseMs: number[] = [];
  for (let i = 0; i < n; i++) {
    let box: Awaited<ReturnType<typeof warm.acquire>> | undefined;
    warmMs.push(
      await time(async () => {
        box = await warm.acquire(files, { rolloutId: `w${i}` });
      }),
    );
    await box?.exec("python train.py --model mean >/dev/null; echo junk > junk.txt", 60_000);
    releaseMs.push(await time(() => warm.release(box as NonNullable<typeof box>)));
  }
  console.log(
    `docker warm reset (pooled container: kill agent processes, rebuild workspace, new agent shell): ${quantiles(warmMs)}`,
  );
  console.log(
    `docker release to the pool: ${quantiles(releaseMs)}; containers created: ${warm.containersCreated}`,
  );
  await execRoundTrips(warm, files, "docker");
  await warm.close();
} finally {
  rmSync(cache, { recursive: true, force: true });
  const Docker = (await import("dockerode")).default;
  await removeContainersByLabel(new Docker(), runName);
}
