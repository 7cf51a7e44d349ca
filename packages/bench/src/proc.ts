import { readFileSync } from "node:fs";
import type { Subprocess } from "bun";
import type { SimServerOptions, SimServerStats } from "./sim/server.ts";

const CLOCK_TICKS_PER_S = 100;
const live = new Set<Subprocess>();

/** Tracks a child so an interrupted benchmark can stop it ({@link killLiveChildren}). */
export function trackChild<T extends Subprocess>(child: T): T {
  live.add(child);
  void child.exited.then(() => live.delete(child));
  return child;
}

/**
 * SIGKILLs every child this process started that is still running (sim servers, workers, quickstart run);
 * for an interrupted or timed-out benchmark. Returns how many it killed.
 * @example process.on("SIGINT", () => { killLiveChildren(); process.exit(130); });
 */
export function killLiveChildren(): number {
  let killed = 0;
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      killed++;
    }
  }
  live.clear();
  return killed;
}

/**
 * CPU time (user + system, ms) a live process has used so far, from /proc/<pid>/stat; NaN when unreadable.
 * @example procCpuMs(process.pid)
 */
export function procCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S) * 1000;
  } catch {
    return Number.NaN;
  }
}

/**
 * This process's RSS now (`base`) and its peak from now on, sampled every `everyMs` until `stop()`, which samples
 * once more and returns the peak (bytes).
 * @example const rss = watchRss(50); await work(); const peak = rss.stop(); // peak - rss.base: what work grew
 */
export function watchRss(everyMs: number): { base: number; stop(): number } {
  const base = process.memoryUsage.rss();
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, everyMs);
  return {
    base,
    stop: () => {
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage.rss());
      return peak;
    },
  };
}

/** Stops a child: SIGTERM, then SIGKILL when it has not exited after `graceMs`. */
export async function stopChild(child: Subprocess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
  if (!exited) {
    child.kill("SIGKILL");
    await Promise.race([child.exited, Bun.sleep(graceMs)]);
  }
}

async function firstLine(
  stream: ReadableStream<Uint8Array>,
  timeoutMs: number,
  what: string,
): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no output after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    while (!text.includes("\n")) {
      const { value, done } = await Promise.race([reader.read(), timeout]);
      if (done) throw new Error(`${what} exited before printing its port`);
      text += decoder.decode(value, { stream: true });
    }
    return text.slice(0, text.indexOf("\n"));
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
}

/** A simulated inference server running in its own process. */
export interface SimServerProcess {
  baseUrl: string;
  pid: number;
  stats(): Promise<SimServerStats>;
  /** Zeroes the request counters and the peak. */
  resetStats(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the simulated vLLM server as a child process on 127.0.0.1 and waits (with a timeout) until it listens.
 * @example const sim = await spawnSimServer({ model: "sim", latency, seed: 1, completionTokens: 40, maxModelLen: 32768 });
 */
export async function spawnSimServer(
  options: SimServerOptions,
  timeoutMs = 15_000,
): Promise<SimServerProcess> {
  const child = trackChild(
    Bun.spawn(["bun", `${import.meta.dir}/sim/server-main.ts`, JSON.stringify(options)], {
      stdout: "pipe",
      stderr: "inherit",
      stdin: "ignore",
    }),
  );
  try {
    const line = await firstLine(child.stdout, timeoutMs, "sim server");
    const { port } = JSON.parse(line) as { port: number };
    const root = `http://127.0.0.1:${port}`;
    return {
      baseUrl: `${root}/v1`,
      pid: child.pid,
      stats: async () =>
        (await (
          await fetch(`${root}/sim/stats`, { signal: AbortSignal.timeout(10_000) })
        ).json()) as SimServerStats,
      resetStats: async () => {
        await fetch(`${root}/sim/reset`, { method: "POST", signal: AbortSignal.timeout(10_000) });
      },
      stop: () => stopChild(child),
    };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

/** What {@link runBun} saw of one child: its output, exit code (signal when killed) and wall time. */
export interface BunRun {
  stdout: string;
  stderr: string;
  code: number;
  signal: NodeJS.Signals | number | null;
  wallS: number;
}

/**
 * Runs `bun <args>` to its end and collects its output: SIGINT after `interruptMs` (when set, so the child can
 * stop cleanly), SIGKILL after `killMs`. A benchmark's child runs this way (quickstart, tree-learn, audit, workers).
 * @example const run = await runBun(["packages/launcher/src/bin/rl.ts", config], { cwd: REPO, killMs: 600_000 });
 */
export async function runBun(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; interruptMs?: number; killMs: number },
): Promise<BunRun> {
  const t0 = performance.now();
  const child = trackChild(
    Bun.spawn(["bun", ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    }),
  );
  const interrupt =
    options.interruptMs === undefined
      ? undefined
      : setTimeout(() => child.kill("SIGINT"), options.interruptMs);
  const kill = setTimeout(() => child.kill("SIGKILL"), options.killMs);
  try {
    const [stdout, stderr, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ]);
    return { stdout, stderr, code, signal: child.signalCode, wallS: (performance.now() - t0) / 1000 };
  } finally {
    clearTimeout(interrupt);
    clearTimeout(kill);
    await stopChild(child, 1000);
  }
}

/**
 * Runs `bun <script> '<input JSON>'` and parses the last stdout line as JSON; kills it after `timeoutMs`.
 * Each measurement runs in a fresh process so CPU time and RSS are its own.
 * @example const result = await runWorker<PipelineResult>("src/benchmarks/pipeline-worker.ts", input, 120_000);
 */
export async function runWorker<T>(
  script: string,
  input: unknown,
  timeoutMs: number,
  env: Record<string, string> = {},
): Promise<T> {
  const run = await runBun([script, JSON.stringify(input)], { env, killMs: timeoutMs });
  if (run.code !== 0) {
    const why = run.signal ? `killed by ${run.signal} (timeout ${timeoutMs} ms)` : `exit ${run.code}`;
    throw new Error(`${script} failed (${why}): ${run.stderr.slice(-2000)}`);
  }
  const last = run.stdout.trim().split("\n").at(-1) ?? "";
  return JSON.parse(last) as T;
}
