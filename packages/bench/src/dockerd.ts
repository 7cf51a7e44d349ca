import { existsSync, readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import type Docker from "dockerode";

const REPO = resolve(import.meta.dir, "../../..");

/**
 * Whether the engine answers a ping within `withinMs` (false for an error or no answer in time).
 * @example if (!(await engineAnswers(docker))) startOne();
 */
export async function engineAnswers(docker: Docker, withinMs = 5000): Promise<boolean> {
  return await Promise.race([
    docker.ping().then(
      () => true,
      () => false,
    ),
    Bun.sleep(withinMs).then(() => false),
  ]);
}

const started = new Set<() => Promise<void>>();

/**
 * Stops every dockerd this process started (for an interrupted benchmark).
 * @example await stopStartedEngines();
 */
export async function stopStartedEngines(): Promise<void> {
  await Promise.all([...started].map((stop) => stop()));
}

/** A docker engine for a benchmark; `stop()` stops dockerd only when this call started it. */
export interface Engine {
  startedHere: boolean;
  stop(): Promise<void>;
}

/**
 * Makes sure a docker engine answers: when none does, runs `scripts/ensure-docker` (which starts dockerd and
 * writes its pid to a pidfile of our own) and waits for it; `stop()` then SIGTERMs that dockerd and waits
 * (bounded) for it to exit. An engine that was already running is left alone.
 * @example const engine = await ensureEngine(new Docker()); try { … } finally { await engine.stop(); }
 */
export async function ensureEngine(docker: Docker, timeoutS = 60): Promise<Engine> {
  if (await engineAnswers(docker)) return { startedHere: false, stop: async () => {} };
  const pidfile = `/tmp/air-bench-dockerd-${process.pid}.pid`;
  const child = Bun.spawn(["bash", "scripts/ensure-docker", String(timeoutS)], {
    cwd: REPO,
    env: {
      ...process.env,
      AIR_DOCKERD_PIDFILE: pidfile,
      AIR_DOCKERD_LOG: `/tmp/air-bench-dockerd-${process.pid}.log`,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), (timeoutS + 10) * 1000);
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  clearTimeout(killer);
  const pid = existsSync(pidfile) ? Number(readFileSync(pidfile, "utf8").trim()) : undefined;
  const stop = async () => {
    started.delete(stop);
    if (!pid) return;
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      return;
    }
    for (let i = 0; i < 60; i++) {
      try {
        process.kill(pid, 0);
      } catch {
        break;
      }
      await Bun.sleep(500);
    }
    rmSync(pidfile, { force: true });
  };
  if (code !== 0 || !(await engineAnswers(docker))) {
    await stop();
    throw new Error(
      `no docker engine and scripts/ensure-docker failed (exit ${code}): ${(out + err).slice(-800)}`,
    );
  }
  if (pid !== undefined) started.add(stop);
  return { startedHere: pid !== undefined, stop };
}
