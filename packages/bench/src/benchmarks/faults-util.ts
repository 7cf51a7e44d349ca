import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort } from "@air/core/testing";
import type Docker from "dockerode";

export const REPO = resolve(import.meta.dir, "../../../..");
export const CONFIG = "configs/quickstart.toml";
export const RL = "packages/launcher/src/bin/rl.ts";
/** Where the logs of a fault run that left something behind (or failed its goal) are kept for a look. */
export const KEPT_DIR = "/tmp/air-bench-faults-kept";

export interface PidEntry {
  pid: number;
  startTime?: number;
  role?: string;
}
export interface PidFile {
  launcher: PidEntry;
  children: PidEntry[];
}

export function readPidFile(runDir: string): PidFile | undefined {
  try {
    return JSON.parse(readFileSync(join(runDir, "run.pid.json"), "utf8")) as PidFile;
  } catch {
    return undefined;
  }
}

export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}

/** The program name of a process (`/proc/<pid>/comm`), or "?" once it is gone. */
export function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

/** Live processes carrying the run's marker (`AIR_RUN_DIR=<runDir>`), by /proc. */
export function markedProcesses(runDir: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${pid}/environ`, "utf8");
      if (env.split("\0").includes(`AIR_RUN_DIR=${runDir}`) && alive(pid)) out.push(pid);
    } catch {}
  }
  return out;
}

export async function runContainers(docker: Docker, runDir: string): Promise<string[]> {
  const list = await docker.listContainers({
    all: true,
    filters: { label: [`air.run=${runDir}`, "air.managed=true"] },
  });
  return list.map((c) => c.Id);
}

/**
 * Everything of a run still there: processes (pid file or marker), named by their role in `seen` or their
 * program, and labelled containers.
 * @example await leftovers(docker, runDir, new Map([[123, "inference"]])) // ["pid 123 (inference)"]
 */
export async function leftovers(
  docker: Docker | undefined,
  runDir: string,
  seen: Map<number, string>,
): Promise<string[]> {
  const pids = new Set([...seen.keys()].filter(alive));
  for (const pid of markedProcesses(runDir)) pids.add(pid);
  const containers = docker ? await runContainers(docker, runDir).catch(() => [] as string[]) : [];
  return [
    ...[...pids].map((p) => `pid ${p} (${seen.get(p) ?? comm(p)})`),
    ...containers.map((c) => `container ${c.slice(0, 12)}`),
  ];
}

/** A port nothing listens on right now (`@air/core/testing`'s). */
export { freePort };

export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await Bun.sleep(100);
  }
  return check();
}

/**
 * Copies a fault run's logs (the launcher's stamped log and `<run dir>/logs`) to `KEPT_DIR/<label>` before the run
 * dir is removed; returns that path.
 */
export function keepLogs(out: string, runDir: string, label: string): string {
  const dest = join(KEPT_DIR, `${label}-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  mkdirSync(dest, { recursive: true });
  for (const name of existsSync(out) ? readdirSync(out) : [])
    if (name.endsWith(".log")) cpSync(join(out, name), join(dest, name));
  if (existsSync(join(runDir, "logs"))) cpSync(join(runDir, "logs"), join(dest, "logs"), { recursive: true });
  return dest;
}

/** The last completed step in a run dir's progress.json, or undefined. */
export function progressStep(runDir: string): number | undefined {
  try {
    return (JSON.parse(readFileSync(join(runDir, "progress.json"), "utf8")) as { lastCompletedStep: number })
      .lastCompletedStep;
  } catch {
    return undefined;
  }
}

/** prime-rl steps the tiny trainer reported (metrics.jsonl), with repeats. */
export function trainedSteps(runDir: string): number[] {
  const file = join(runDir, "prime-rl", "metrics.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { step: number }).step);
}

/** `rl clean` of a bench run's output dir (its processes and labelled containers), then the dir itself. */
export function removeRun(out: string): void {
  Bun.spawnSync(["bun", RL, "clean", out, "--grace-ms", "1000"], {
    cwd: REPO,
    stdout: "ignore",
    stderr: "ignore",
  });
  rmSync(out, { recursive: true, force: true });
}
