import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import type Docker from "dockerode";

export const REPO = resolve(import.meta.dir, "../../../..");
export const CONFIG = "configs/quickstart.toml";
export const RL = "packages/launcher/src/bin/rl.ts";

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

/** Everything of a run still there: processes (pid file or marker) and labelled containers. */
export async function leftovers(
  docker: Docker | undefined,
  runDir: string,
  seen: Set<number>,
): Promise<string[]> {
  const pids = new Set([...seen].filter(alive));
  for (const pid of markedProcesses(runDir)) pids.add(pid);
  const containers = docker ? await runContainers(docker, runDir) : [];
  return [...[...pids].map((p) => `pid ${p}`), ...containers.map((c) => `container ${c.slice(0, 12)}`)];
}

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await Bun.sleep(100);
  }
  return check();
}
