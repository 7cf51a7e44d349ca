import { rmSync } from "node:fs";
import { DockerRuntime, removeContainersByLabel, type Sandbox } from "@air/sandbox";
import Docker from "dockerode";
import { ensureEngine } from "../dockerd.ts";
import type { BenchReport } from "../report.ts";
import { fmt, fmtSpread, quantile, spread, spreadRow } from "../stats.ts";
import { BENCH_IMAGE, benchBox, benchTaskFiles } from "../taskfiles.ts";
import type { BenchOptions } from "./pipeline.ts";

/** The `air.run` label of every container this benchmark process creates. */
export const BENCH_RUN_NAME = `air-bench-${process.pid}`;

/**
 * Force-removes this process's benchmark containers (by label); for an interrupted run.
 * @example await removeBenchContainers();
 */
export async function removeBenchContainers(): Promise<number> {
  const removed = await Promise.race([
    removeContainersByLabel(new Docker(), BENCH_RUN_NAME).catch(() => []),
    Bun.sleep(30_000).then(() => []),
  ]);
  return removed.length;
}
const PARALLEL = [1, 2, 4, 8, 16];
const WORK = "ls /usr/bin | wc -l";

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const out = await work();
  return [performance.now() - t0, out];
}

function runtime(docker: Docker, runName: string, poolSize: number): DockerRuntime {
  return new DockerRuntime({ ...benchBox(runName), gpuIds: [], poolSize, docker });
}

/** One `docker exec` per command, the way a runtime without a persistent shell would run it. */
async function dockerExecOnce(docker: Docker, containerId: string, command: string): Promise<void> {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: ["bash", "-c", command],
    User: "agent",
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({});
  await new Promise<void>((resolve, reject) => {
    stream.on("end", resolve);
    stream.on("error", reject);
    stream.resume();
  });
  await exec.inspect();
}

async function checkDocker(docker: Docker): Promise<string> {
  const version = await Promise.race([
    docker.version(),
    Bun.sleep(10_000).then(() => {
      throw new Error("docker engine did not answer within 10 s");
    }),
  ]);
  await docker
    .getImage(BENCH_IMAGE)
    .inspect()
    .catch(() => {
      throw new Error(`image ${BENCH_IMAGE} missing (build it: bash scripts/build-test-image)`);
    });
  return `docker ${version.Version} (${version.Os}/${version.Arch}), image ${BENCH_IMAGE}`;
}

/**
 * Benchmark 3 (real dockerd): command round-trip through the runtime's persistent shell vs one `docker exec`
 * per command; warm workspace reset (pooled container) vs cold create+start; aggregate command throughput
 * with 1..16 containers working in parallel. Every container it creates is removed, also on failure.
 * @example const report = await containersBenchmark({ quick: false });
 */
export async function containersBenchmark(options: BenchOptions): Promise<BenchReport> {
  const docker = new Docker();
  const daemon = await ensureEngine(docker);
  let engine: string;
  try {
    engine = await checkDocker(docker);
  } catch (error) {
    await daemon.stop();
    throw error;
  }
  if (daemon.startedHere) engine += " (dockerd started by this benchmark, stopped after)";
  const runName = BENCH_RUN_NAME;
  const files = benchTaskFiles();
  const pooled = runtime(docker, runName, 32);
  const cold = runtime(docker, runName, 0);
  const reps = options.quick ? 3 : 8;
  try {
    const roundTrip = await measureRoundTrip(docker, pooled, files, options.quick ? 100 : 300);
    const reset = await measureReset(pooled, cold, files, reps);
    const parallel = await measureParallel(pooled, files, options.quick ? 1000 : 2000, options.quick ? 1 : 3);
    return containersReport(options, engine, roundTrip, reset, parallel);
  } finally {
    await Promise.race([Promise.all([pooled.close(), cold.close()]), Bun.sleep(60_000)]);
    await removeContainersByLabel(docker, runName).catch(() => []);
    rmSync(files.dir, { recursive: true, force: true });
    await daemon.stop();
  }
}

async function measureRoundTrip(
  docker: Docker,
  rt: DockerRuntime,
  files: ReturnType<typeof benchTaskFiles>,
  n: number,
) {
  const box = await rt.acquire(files, { rolloutId: "roundtrip" });
  const shellTrue: number[] = [];
  const shellProgram: number[] = [];
  const execTrue: number[] = [];
  // Docker names a container's host after its short id (the runtime sets no hostname): the id for a raw exec.
  const containerId = (await box.exec("cat /etc/hostname", 10_000)).output.trim();
  if (!/^[0-9a-f]{12}$/.test(containerId)) throw new Error(`no container id as the hostname: ${containerId}`);
  for (let i = 0; i < 20; i++) await box.exec("true", 10_000);
  for (let i = 0; i < n; i++) {
    shellTrue.push((await timed(() => box.exec("true", 10_000)))[0]);
    shellProgram.push((await timed(() => box.exec("cat /etc/hostname", 10_000)))[0]);
    if (i % 10 === 0) execTrue.push((await timed(() => dockerExecOnce(docker, containerId, "true")))[0]);
  }
  await rt.release(box);
  return { shellTrue, shellProgram, execTrue };
}

async function measureReset(
  pooled: DockerRuntime,
  cold: DockerRuntime,
  files: ReturnType<typeof benchTaskFiles>,
  reps: number,
) {
  const warmMs: number[] = [];
  const coldMs: number[] = [];
  const parkMs: number[] = [];
  const removeMs: number[] = [];
  let box: Sandbox = await pooled.acquire(files, { rolloutId: "warm" });
  for (let i = 0; i < reps; i++) {
    await box.exec("echo scratch > out.txt && mkdir -p runs && python3 -c 'print(1)' > runs/log", 30_000);
    parkMs.push((await timed(() => pooled.release(box)))[0]);
    const [w, next] = await timed(() => pooled.acquire(files, { rolloutId: `warm-${i}` }));
    warmMs.push(w);
    box = next;
    const [c, fresh] = await timed(() => cold.acquire(files, { rolloutId: `cold-${i}` }));
    coldMs.push(c);
    removeMs.push((await timed(() => cold.release(fresh)))[0]);
  }
  await pooled.release(box);
  return { warmMs, coldMs, parkMs, removeMs };
}

async function measureParallel(
  rt: DockerRuntime,
  files: ReturnType<typeof benchTaskFiles>,
  windowMs: number,
  repeats: number,
) {
  const perS = new Map<number, number[]>();
  const p50 = new Map<number, number[]>();
  const boxes = await Promise.all(
    Array.from({ length: Math.max(...PARALLEL) }, (_, i) => rt.acquire(files, { rolloutId: `par-${i}` })),
  );
  try {
    for (const b of boxes) await b.exec(WORK, 10_000);
    for (let rep = 0; rep < repeats; rep++) {
      for (const k of PARALLEL) {
        const latencies: number[] = [];
        const end = performance.now() + windowMs;
        await Promise.all(
          boxes.slice(0, k).map(async (b) => {
            while (performance.now() < end) latencies.push((await timed(() => b.exec(WORK, 10_000)))[0]);
          }),
        );
        perS.set(k, [...(perS.get(k) ?? []), latencies.length / (windowMs / 1000)]);
        p50.set(k, [...(p50.get(k) ?? []), quantile(latencies, 0.5)]);
      }
    }
  } finally {
    await Promise.all(boxes.map((b) => rt.release(b)));
  }
  return PARALLEL.map((k) => ({ k, perS: spread(perS.get(k) ?? []), p50: spread(p50.get(k) ?? []) }));
}

function containersReport(
  options: BenchOptions,
  engine: string,
  rt: Awaited<ReturnType<typeof measureRoundTrip>>,
  reset: Awaited<ReturnType<typeof measureReset>>,
  parallel: Awaited<ReturnType<typeof measureParallel>>,
): BenchReport {
  const p = (list: number[], q: number) => fmt(quantile(list, q));
  const p50 = quantile(rt.shellTrue, 0.5);
  const ratios = reset.warmMs.map((w, i) => w / (reset.coldMs[i] as number));
  const ratio = spread(ratios).median;
  const best = Math.max(...parallel.map((r) => r.perS.median));
  const knee = parallel.find((r) => r.perS.median >= 0.9 * best)?.k ?? Number.NaN;
  const one = parallel[0]?.perS.median ?? 1;
  return {
    name: "containers",
    title: "3. Containers (real dockerd)",
    command: `bun run bench containers${options.quick ? " --quick" : ""} --write`,
    machineExtra: [engine],
    goals: [
      `command round-trip p50 ≤ 10 ms: **${fmt(p50)} ms** — ${p50 <= 10 ? "met" : "missed"}`,
      `warm reset ≤ 0.05 × cold create+start: **${fmt(ratio)}×** — ${ratio <= 0.05 ? "met" : "missed"}`,
      `containers in parallel before throughput flattens: **${knee}** (first count reaching 90% of the best aggregate rate)`,
    ],
    tables: [
      {
        title: "Command round-trip (ms)",
        headers: ["command path", "n", "p50", "p95", "max"],
        rows: [
          [
            "`true` through the persistent agent shell (DockerSandbox.exec)",
            String(rt.shellTrue.length),
            p(rt.shellTrue, 0.5),
            p(rt.shellTrue, 0.95),
            p(rt.shellTrue, 1),
          ],
          [
            "`cat /etc/hostname` (a program) through the shell",
            String(rt.shellProgram.length),
            p(rt.shellProgram, 0.5),
            p(rt.shellProgram, 0.95),
            p(rt.shellProgram, 1),
          ],
          [
            "`true` as one `docker exec` (create+start+wait+inspect), alongside",
            String(rt.execTrue.length),
            p(rt.execTrue, 0.5),
            p(rt.execTrue, 0.95),
            p(rt.execTrue, 1),
          ],
        ],
      },
      {
        title: "Workspace reset: warm (pooled container) vs cold (create + start + init + reset), paired",
        headers: ["measure", "n", "median (min–max) ms"],
        rows: [
          spreadRow(
            "warm acquire: rename the staged workspace into place, `cd` the staged agent shell",
            reset.warmMs,
          ),
          spreadRow("cold acquire: create + start + root shell + bundle upload + reset", reset.coldMs),
          spreadRow("warm ÷ cold (paired)", ratios),
          spreadRow(
            "release to pool (park: kill agent processes, stage the next workspace and agent shell)",
            reset.parkMs,
          ),
          spreadRow("release cold (force remove)", reset.removeMs),
        ],
      },
      {
        title: `Containers in parallel, each running \`${WORK}\` in a loop`,
        headers: ["containers", "commands/s, all containers", "× one container", "p50 command ms"],
        rows: parallel.map((r) => [
          String(r.k),
          fmtSpread(r.perS),
          fmt(r.perS.median / one),
          fmtSpread(r.p50),
        ]),
      },
    ],
    notes: [
      "Containers: the local test image (debootstrap minbase + Debian python3), network none, 1 CPU and 1 GiB " +
        "each, `--init`; the runtime and its pool are env-mlgym's DockerRuntime (dockerode). Commands go through " +
        "the agent's persistent bash over one hijacked exec stream (sentinel-delimited). The round-trip rows are " +
        "interleaved; a `docker exec` per command is measured every 10th iteration alongside, as the reference.",
      "Warm reset = check the container is alive (inspect), then rename the workspace that `park` staged on " +
        "release (a fresh copy of the task bundle's workspace, chowned, beside the workspace path) into place and " +
        "`cd` the agent shell that park already started in it. The work moved to park (kill the agent's " +
        "processes, remove the used workspace and leftovers, copy, open the agent shell) is in the park row; it " +
        "runs when a rollout ends, off the next rollout's path. Cold adds container create + start, the root " +
        "shell, the bundle upload (putArchive) and the workspace build. Container removal on release (cold path) is " +
        "not part of acquire. Parallel containers: each sweep runs 1, 2, 4, 8, 16 containers for a fixed window, " +
        "sweeps repeated; on 2 shared cores the aggregate rate stops growing once both cores are busy, and " +
        "beyond that more containers only add latency per command.",
    ],
  };
}
