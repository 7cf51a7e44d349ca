import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DockerRuntime,
  dockerClient,
  LocalRuntime,
  type Runtime,
  removeContainersByLabel,
  runProcess,
  type Sandbox,
  type TaskFiles,
} from "@air/sandbox";
import type { BenchReport } from "../report.ts";
import { fmt, spread } from "../stats.ts";
import type { BenchOptions } from "./pipeline.ts";

const IMAGE = process.env.AIR_TEST_IMAGE ?? "air-mlgym-test:latest";
const SIZES = [1, 500];

/** A task bundle whose read-only `data/` holds `mb` MiB of random bytes; the evaluation reads the submission. */
async function task(root: string, mb: number): Promise<TaskFiles> {
  const dir = join(root, `task-${mb}mb`);
  mkdirSync(join(dir, "workspace", "data"), { recursive: true });
  mkdirSync(join(dir, "evaluation"), { recursive: true });
  const out = await runProcess(
    ["dd", "if=/dev/urandom", `of=${join(dir, "workspace", "data", "train.bin")}`, "bs=1M", `count=${mb}`],
    { cwd: "/", timeoutMs: 300_000 },
  );
  if (out.exitCode !== 0) throw new Error(`making ${mb} MB of data failed: ${out.stderr}`);
  writeFileSync(join(dir, "workspace", "train.py"), "print('train')\n");
  writeFileSync(
    join(dir, "evaluation", "evaluate.py"),
    "import json, os\nprint(json.dumps({'Score': float(open('submission.txt').read()), 'data': os.path.getsize('data/train.bin')}))\n",
  );
  return { key: `bench-sandbox-${mb}-${process.pid}`, dir, readOnly: ["data"] };
}

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const value = await work();
  return [performance.now() - t0, value];
}

/** What an episode leaves besides the data: a submission and a 2 MB model. */
const EPISODE = "echo 0.5 > submission.txt; head -c 2000000 /dev/urandom > model.bin";

/** p50 of `evaluate` on one sandbox (after one untimed evaluation). */
async function validateMs(runtime: Runtime, files: TaskFiles, reps: number): Promise<number[]> {
  const box = await runtime.acquire(files, { rolloutId: `v-${files.key}` });
  try {
    await box.exec(EPISODE, 60_000);
    const request = { command: "python3 evaluate.py", timeoutMs: 120_000 };
    const first = await box.evaluate(request);
    if (!first.stdout.includes('"Score": 0.5'))
      throw new Error(`evaluation failed: ${first.stdout} ${first.stderr}`);
    const out: number[] = [];
    for (let i = 0; i < reps; i++) out.push((await timed(() => box.evaluate(request)))[0]);
    return out;
  } finally {
    await runtime.release(box, true);
  }
}

/** A fork of a live sandbox (`Runtime.fork`, else its snapshot into a pooled one) vs a cold acquire, paired. */
async function forkVsCold(warm: Runtime, cold: Runtime, files: TaskFiles, reps: number) {
  const forkTimes: number[] = [];
  const coldTimes: number[] = [];
  const parent = await warm.acquire(files, { rolloutId: "parent" });
  try {
    await parent.exec(EPISODE, 60_000);
    const fork = async (i: number): Promise<Sandbox> =>
      warm.fork
        ? warm.fork(parent, files, { rolloutId: `f${i}` })
        : warm.acquire(files, { rolloutId: `f${i}`, snapshot: await parent.snapshot() });
    await warm.release(await fork(-1));
    for (let i = 0; i < reps; i++) {
      await Bun.sleep(300);
      const [f, child] = await timed(() => fork(i));
      forkTimes.push(f);
      if ((await child.exec("cat submission.txt", 30_000)).output !== "0.5\n")
        throw new Error("the fork lost the workspace");
      await warm.release(child);
      const [c, fresh] = await timed(() => cold.acquire(files, { rolloutId: `c${i}` }));
      coldTimes.push(c);
      await cold.release(fresh, true);
    }
  } finally {
    await warm.release(parent, true);
  }
  return { fork: forkTimes, cold: coldTimes };
}

interface Row {
  runtime: string;
  mb: number;
  validate: number[];
  fork: number[];
  cold: number[];
}

const median = (list: number[]) => spread(list).median;

/**
 * Benchmark: what a validate and a fork cost as the task's data grows (1 MB vs 500 MB of read-only data), on the
 * local (bubblewrap) runtime and on docker, side by side in one run.
 * @example const report = await sandboxBenchmark({ quick: true });
 */
export async function sandboxBenchmark(options: BenchOptions): Promise<BenchReport> {
  const reps = options.quick ? 5 : 15;
  const root = mkdtempSync(join(tmpdir(), "air-bench-sandbox-"));
  const rows: Row[] = [];
  const failures: string[] = [];
  const docker = dockerClient();
  const dockerUp = await docker
    .getImage(IMAGE)
    .inspect()
    .then(
      () => true,
      () => false,
    );
  const runName = `air-bench-sandbox-${process.pid}`;
  try {
    for (const mb of SIZES) {
      const files = await task(root, mb);
      const python = "/usr/bin/python3";
      const warm = new LocalRuntime({ root: join(root, `local-${mb}`), python });
      const cold = new LocalRuntime({ root: join(root, `cold-${mb}`), python, stageNext: false });
      try {
        const validate = await validateMs(warm, files, reps);
        rows.push({ runtime: "local (bwrap)", mb, validate, ...(await forkVsCold(warm, cold, files, reps)) });
        process.stderr.write(`[sandbox] local, ${mb} MB: done\n`);
      } finally {
        await Promise.all([warm.close(), cold.close()]);
      }
      if (!dockerUp) continue;
      const base = {
        image: IMAGE,
        user: "agent",
        workspace: "/home/agent/workspace",
        memoryMb: 2048,
        cpus: 1,
        pidsLimit: 256,
        network: "none",
        gpuIds: [],
        runName,
        timeoutMs: 120_000,
        docker,
      };
      const dWarm = new DockerRuntime({ ...base, poolSize: 2 });
      const dCold = new DockerRuntime({ ...base, poolSize: 0 });
      const dReps = Math.min(reps, mb > 100 ? 4 : reps);
      try {
        const validate = await validateMs(dWarm, files, dReps);
        const forks = await forkVsCold(dWarm, dCold, files, dReps).catch((error: unknown) => {
          failures.push(`docker fork at ${mb} MB failed: ${String(error).slice(0, 200)}`);
          return { fork: [], cold: [] };
        });
        rows.push({ runtime: "docker", mb, validate, ...forks });
        process.stderr.write(`[sandbox] docker, ${mb} MB: done\n`);
      } finally {
        await Promise.all([dWarm.close(), dCold.close()]);
      }
    }
  } finally {
    if (dockerUp) await removeContainersByLabel(docker, runName).catch(() => []);
    rmSync(root, { recursive: true, force: true });
  }
  const byRuntime = [...new Set(rows.map((r) => r.runtime))];
  const ratio = (runtime: string, pick: (r: Row) => number[]) => {
    const [small, big] = SIZES.map((mb) => rows.find((r) => r.runtime === runtime && r.mb === mb));
    return small && big ? median(pick(big)) / median(pick(small)) : Number.NaN;
  };
  const localValidate = ratio("local (bwrap)", (r) => r.validate);
  const localFork = Math.max(
    ...rows.filter((r) => r.runtime === "local (bwrap)").map((r) => median(r.fork) / median(r.cold)),
  );
  const dockerValidate = ratio("docker", (r) => r.validate);
  return {
    name: "sandbox",
    title: "11. Sandboxes: validate and fork vs the task's data size",
    command: `bun run bench sandbox${options.quick ? " --quick" : ""} --write`,
    goals: [
      `local validate p50, 500 MB ÷ 1 MB of data ≤ 1.5×: **${fmt(localValidate)}×** — ${localValidate <= 1.5 ? "met" : "missed"}`,
      `local fork ÷ cold acquire ≤ 0.2 (the worse of the two sizes): **${fmt(localFork)}** — ${localFork <= 0.2 ? "met" : "missed"}`,
      ...(byRuntime.includes("docker")
        ? [`docker validate p50, 500 MB ÷ 1 MB of data: **${fmt(dockerValidate)}×**`]
        : ["docker: not measured (no engine or no test image)"]),
    ],
    tables: [
      {
        title:
          "p50 ms (n per cell in brackets); fork: `Runtime.fork` (docker: snapshot into a pooled container)",
        headers: ["runtime", "data", "validate", "fork", "cold acquire", "fork ÷ cold"],
        rows: rows.map((r) => [
          r.runtime,
          `${r.mb} MB`,
          `${fmt(median(r.validate))} (${r.validate.length})`,
          `${fmt(median(r.fork))} (${r.fork.length})`,
          `${fmt(median(r.cold))} (${r.cold.length})`,
          fmt(median(r.fork) / median(r.cold)),
        ]),
      },
    ],
    notes: [
      ...failures,
      "Each task: `data/train.bin` (read-only, 1 or 500 MiB of random bytes), `train.py`; each episode leaves a " +
        "submission and a 2 MB model. Local: the read-only paths are mounted from the task bundle into every " +
        "sandbox, fork and evaluation (never copied); the rest is copied with `cp -a --reflink=auto` (reflinks on " +
        "btrfs/XFS, a plain copy on ext4 as here); a fork as root copies in-process while the parent's processes " +
        "are stopped. Docker: the read-only paths are hard links to the bundle inside the container; a cold acquire " +
        "sends the task bundle (data included) into each new container.",
    ],
  };
}
