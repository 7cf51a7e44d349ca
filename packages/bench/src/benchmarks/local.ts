import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalRuntime, type Runtime, type Sandbox, UnsandboxedRuntime } from "@air/sandbox";
import type { BenchReport } from "../report.ts";
import { fmt, quantile, spread, spreadRow } from "../stats.ts";
import { benchTaskFiles } from "../taskfiles.ts";
import type { BenchOptions } from "./pipeline.ts";

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const value = await work();
  return [performance.now() - t0, value];
}

async function spawnTrue(): Promise<void> {
  const child = Bun.spawn(["bash", "-c", "true"], { stdout: "ignore", stderr: "ignore", stdin: "ignore" });
  const code = await Promise.race([child.exited, Bun.sleep(10_000).then(() => "timeout" as const)]);
  if (code === "timeout") {
    child.kill("SIGKILL");
    throw new Error("bash -c true did not exit within 10 s");
  }
}

/**
 * Round trips of `true` and a program through the bwrap sandbox's and the unsandboxed sandbox's persistent
 * shells and a bare spawn, all interleaved in one loop so that they see the same machine load.
 */
async function roundTrips(boxed: Sandbox, plain: Sandbox, n: number) {
  const r = { boxedTrue: [] as number[], boxedProgram: [] as number[], plainTrue: [] as number[] };
  const more = { plainProgram: [] as number[], spawn: [] as number[] };
  for (let i = 0; i < 50; i++) {
    await boxed.exec("true", 10_000);
    await plain.exec("true", 10_000);
    await spawnTrue();
  }
  for (let i = 0; i < n; i++) {
    r.boxedTrue.push((await timed(() => boxed.exec("true", 10_000)))[0]);
    r.plainTrue.push((await timed(() => plain.exec("true", 10_000)))[0]);
    more.spawn.push((await timed(spawnTrue))[0]);
    r.boxedProgram.push((await timed(() => boxed.exec("cat /etc/hostname", 10_000)))[0]);
    more.plainProgram.push((await timed(() => plain.exec("cat /etc/hostname", 10_000)))[0]);
  }
  return { ...r, ...more };
}

/**
 * Warm (the next sandbox staged while the previous one ran) against cold acquires, paired; each acquired
 * sandbox runs one command and is released. The staged runtime gets a moment between rollouts to stage, as a
 * rollout's own run time gives it in a real run.
 */
async function resets(warm: Runtime, cold: Runtime, files: ReturnType<typeof benchTaskFiles>, reps: number) {
  const warmMs: number[] = [];
  const coldMs: number[] = [];
  const releaseMs: number[] = [];
  await warm.release(await warm.acquire(files, { rolloutId: "prime" }));
  for (let i = 0; i < reps; i++) {
    await Bun.sleep(150);
    const [w, box] = await timed(() => warm.acquire(files, { rolloutId: `warm-${i}` }));
    warmMs.push(w);
    await box.exec("echo scratch > out.txt", 10_000);
    releaseMs.push((await timed(() => warm.release(box)))[0]);
    const [c, fresh] = await timed(() => cold.acquire(files, { rolloutId: `cold-${i}` }));
    coldMs.push(c);
    await cold.release(fresh);
  }
  return { warmMs, coldMs, releaseMs };
}

/**
 * Benchmark 4: env-mlgym's local runtime — each sandbox a bubblewrap namespace with a persistent bash.
 * Command round trip inside bwrap next to the unsandboxed runtime (`local.isolation = "none"`, the figure
 * before bwrap) and a bare `bash -c true` spawn; warm (staged) vs cold sandbox acquire.
 * @example const report = await localBenchmark({ quick: false });
 */
export async function localBenchmark(options: BenchOptions): Promise<BenchReport> {
  const n = options.quick ? 200 : 1000;
  const reps = options.quick ? 8 : 20;
  const root = mkdtempSync(join(tmpdir(), "air-bench-local-"));
  const files = benchTaskFiles();
  const python = "/usr/bin/python3";
  const bwrap = new LocalRuntime({ root: join(root, "bwrap"), python });
  const cold = new LocalRuntime({ root: join(root, "cold"), python, stageNext: false });
  const plain = new UnsandboxedRuntime({ root: join(root, "plain"), python });
  let trips: Awaited<ReturnType<typeof roundTrips>>;
  let reset: Awaited<ReturnType<typeof resets>>;
  try {
    const box = await bwrap.acquire(files, { rolloutId: "roundtrip" });
    const bare = await plain.acquire(files, { rolloutId: "roundtrip-plain" });
    trips = await roundTrips(box, bare, n);
    await bwrap.release(box);
    await plain.release(bare);
    reset = await resets(bwrap, cold, files, reps);
  } finally {
    await Promise.race([Promise.all([bwrap.close(), cold.close(), plain.close()]), Bun.sleep(30_000)]);
    rmSync(root, { recursive: true, force: true });
    rmSync(files.dir, { recursive: true, force: true });
  }
  const row = (label: string, list: number[]) => [
    label,
    String(list.length),
    fmt(quantile(list, 0.5)),
    fmt(quantile(list, 0.95)),
    fmt(quantile(list, 1)),
  ];
  const p50 = quantile(trips.boxedTrue, 0.5);
  const ratios = reset.warmMs.map((w, i) => w / (reset.coldMs[i] as number));
  const ratio = spread(ratios).median;
  return {
    name: "local",
    title: "4. Local runtime (bubblewrap)",
    command: `bun run bench local${options.quick ? " --quick" : ""} --write`,
    goals: [
      `command round-trip inside bwrap p50 ≤ 0.5 ms: **${fmt(p50)} ms** — ${p50 <= 0.5 ? "met" : "missed"} ` +
        `(unsandboxed, interleaved: ${fmt(quantile(trips.plainTrue, 0.5))} ms)`,
      `warm (staged) acquire ≤ 0.05 × cold: **${fmt(ratio)}×** — ${ratio <= 0.05 ? "met" : "missed"}`,
    ],
    tables: [
      {
        title: "Round-trip (ms), the five rows interleaved in one loop",
        headers: ["command path", "n", "p50", "p95", "max"],
        rows: [
          row("`true` through the persistent bash inside bwrap (LocalSandbox.exec)", trips.boxedTrue),
          row("`cat /etc/hostname` (a program) through the same shell", trips.boxedProgram),
          row(
            '`true`, unsandboxed runtime (`local.isolation = "none"`, the pre-bwrap path)',
            trips.plainTrue,
          ),
          row("`cat /etc/hostname`, unsandboxed", trips.plainProgram),
          row("bare `Bun.spawn(['bash', '-c', 'true'])`", trips.spawn),
        ],
      },
      {
        title: "Sandbox acquire: warm (staged) vs cold, paired (ms; median (min–max))",
        headers: ["path", "n", "ms"],
        rows: [
          spreadRow("warm: hand out the staged sandbox, start staging the next", reset.warmMs),
          spreadRow("cold: copy the workspace, start bwrap + bash (`stage_next = false`)", reset.coldMs),
          spreadRow("warm ÷ cold (paired)", ratios),
          spreadRow("release (kill the sandbox; files removed in the background)", reset.releaseMs),
        ],
      },
    ],
    notes: [
      "Each sandbox is one `bwrap` (own PID, IPC, UTS and network namespaces, system read-only, workspace at " +
        "/home/agent/workspace) running `bash --noprofile --norc`; commands are written to its stdin and delimited " +
        "by a sentinel, so a builtin costs one pipe round trip and a program adds a fork+exec. As root, each " +
        "sandbox runs as its own unprivileged uid (prlimit + setpriv inside bwrap). Warm acquire: the runtime " +
        "prepared the next sandbox of the task (fresh copy + started shell) while the previous rollout ran; the " +
        "loop sleeps 150 ms between rollouts to give it that time, as a rollout's own run does.",
    ],
  };
}
