import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join, resolve } from "node:path";
import { RUN_MARKER } from "./supervisor.ts";

/**
 * A started reaper: `release()` tells it the launcher ended cleanly (it then exits without touching anything) and
 * resolves once it has exited (SIGKILLed after `timeoutMs`), so not even the reaper outlives a clean run.
 */
export interface Reaper {
  pid: number;
  release(timeoutMs?: number): Promise<void>;
  /**
   * Ends the launcher's part but leaves the reaper to remove the run's containers once the engine that holds them
   * answers again (it did not at teardown: e.g. dockerd restarting), for up to its sweep time; does not wait.
   */
  handOffContainers(): void;
  /**
   * Ends the launcher's part after it stopped without waiting for the orchestrator (a second Ctrl-C): a container
   * create a plugin had sent may land after the teardown's sweep, so the reaper sweeps for a while; does not wait.
   */
  handOffAbandoned(): void;
}

/** How long a reaper keeps trying to remove the run's containers from an engine that does not answer. */
export const CONTAINER_SWEEP_MS = 10 * 60_000;

/**
 * Starts the run's reaper (`bin/reaper.ts`) in its own session, so no signal meant for the launcher's terminal or
 * process group reaches it. It waits on a pipe only this process writes to; when the pipe closes without
 * `release()` — this process died, however — it cleans the run dir as `rl clean` does (children, marked
 * processes, labelled containers, pid file). Its log is `<runDir>/logs/reaper.log`. With `sweepMs` > 0 (the run uses
 * Docker) it keeps trying, that long, to remove containers an engine held while it did not answer.
 * @example const reaper = startReaper(runDir, 10_000, CONTAINER_SWEEP_MS); ...; reaper.release();
 */
export function startReaper(runDir: string, graceMs: number, sweepMs = 0): Reaper {
  mkdirSync(join(runDir, "logs"), { recursive: true });
  const log = openSync(join(runDir, "logs", "reaper.log"), "a");
  const env = { ...process.env };
  delete env[RUN_MARKER];
  let child: ChildProcess;
  try {
    const script = resolve(import.meta.dir, "bin", "reaper.ts");
    child = spawn(process.execPath, [script, runDir, String(graceMs), String(sweepMs)], {
      detached: true,
      stdio: ["pipe", "ignore", log],
      env,
    });
  } finally {
    closeSync(log);
  }
  child.unref();
  child.on("error", () => {});
  child.stdin?.on("error", () => {});
  const exited = new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done();
    else child.once("exit", () => done());
  });
  return {
    pid: child.pid ?? -1,
    release: async (timeoutMs = 5000) => {
      child.stdin?.end("done\n");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((done) => {
        timer = setTimeout(() => done("late"), timeoutMs);
      });
      if ((await Promise.race([exited, late])) === "late") child.kill("SIGKILL");
      clearTimeout(timer);
    },
    handOffContainers: () => {
      child.stdin?.end("containers\n");
    },
    handOffAbandoned: () => {
      child.stdin?.end("abandoned\n");
    },
  };
}

/**
 * Ends the run when the process that started this one dies (e.g. `kill -9` of `bun run rl`): polls the parent pid
 * and calls `onOrphaned` once it changes. Returns a function that stops watching.
 * @example const stop = watchParent(() => controller.abort(), 500);
 */
export function watchParent(onOrphaned: () => void, intervalMs = 500): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onOrphaned();
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
