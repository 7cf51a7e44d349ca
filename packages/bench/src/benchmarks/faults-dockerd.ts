import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { engineAnswers } from "../dockerd.ts";
import { leftAfterExit, type Outcome, watchPids } from "./faults-rows.ts";
import { runCounts, startRl } from "./faults-run.ts";
import { comm, keepLogs, progressStep, REPO, removeRun, until } from "./faults-util.ts";

/** The pid file scripts/ensure-docker writes when it starts the machine's dockerd. */
export const MAIN_DOCKERD_PIDFILE = join(REPO, ".cache", "dockerd.pid");
const STEPS = 8;

/** The main dockerd's pid, when its pid file names a running dockerd (else undefined: not ours to restart). */
export function mainDockerdPid(): number | undefined {
  if (!existsSync(MAIN_DOCKERD_PIDFILE)) return undefined;
  const pid = Number(readFileSync(MAIN_DOCKERD_PIDFILE, "utf8").trim());
  return Number.isInteger(pid) && pid > 0 && comm(pid) === "dockerd" ? pid : undefined;
}

/** Pings answered within 3 s: the restart loop polls often. */
const answers = (docker: Docker) => engineAnswers(docker, 3000);

/**
 * Starts the engine with scripts/ensure-docker (in a session of its own, so the dockerd it starts outlives this
 * process) when none answers; resolves true once one does.
 */
export async function ensureMainDockerd(docker: Docker): Promise<boolean> {
  if (await answers(docker)) return true;
  Bun.spawnSync(["setsid", "bash", "scripts/ensure-docker", "90"], {
    cwd: REPO,
    stdout: "ignore",
    stderr: "ignore",
    timeout: 120_000,
  });
  return answers(docker);
}

/**
 * Restarts the machine's main dockerd (the one in `.cache/dockerd.pid`): SIGTERM, wait for it to exit, then start
 * it again with scripts/ensure-docker, all in one detached shell, so the engine comes back even when this process
 * dies in between. Resolves with how long the engine did not answer.
 */
export async function restartMainDockerd(docker: Docker, pid: number, log: string): Promise<number> {
  const script = [
    "set -u",
    `[ "$(cat /proc/${pid}/comm 2>/dev/null)" = dockerd ] || { echo "pid ${pid} is not dockerd"; exit 3; }`,
    `kill -TERM ${pid}`,
    `for _ in $(seq 1 120); do kill -0 ${pid} 2>/dev/null || break; sleep 0.5; done`,
    `if kill -0 ${pid} 2>/dev/null; then echo "dockerd ${pid} still running after 60 s"; exit 4; fi`,
    "exec bash scripts/ensure-docker 90",
  ].join("\n");
  const t0 = Date.now();
  const helper = Bun.spawn(["setsid", "bash", "-c", script], {
    cwd: REPO,
    stdout: Bun.file(log),
    stderr: Bun.file(log),
    stdin: "ignore",
  });
  let downAt: number | undefined;
  await until(async () => {
    const up = await answers(docker);
    if (!up) downAt ??= Date.now();
    return up && downAt !== undefined;
  }, 180_000);
  await Promise.race([helper.exited, Bun.sleep(120_000)]);
  return downAt === undefined ? 0 : Date.now() - Math.max(downAt, t0);
}

/**
 * A docker-runtime quickstart (8 steps, 2 retries per rollout) during which the main dockerd is restarted once a
 * step has completed: the run must finish (exit 0) with every step's rollouts in the store once — the rollouts the
 * restart hit retried or failed, none lost or doubled — and nothing of it left 10 s after it exits. With `hosts`
 * the engine is the one entry of `[env.docker] hosts` (drained while down, readmitted after); without, the
 * default engine. The engine is brought back up afterwards even when the run or the restart failed.
 */
export async function dockerdRestartRun(
  docker: Docker,
  image: string,
  rand: () => number,
  options: { hosts: boolean },
): Promise<Outcome> {
  const pid = mainDockerdPid();
  if (pid === undefined)
    throw new Error(`${MAIN_DOCKERD_PIDFILE} names no running dockerd: not restarting one`);
  const out = mkdtempSync(join(tmpdir(), "air-bench-dockerd-"));
  const run = await startRl(out, "q", [
    ...["--run.max_steps", String(STEPS), "--env.runtime", "docker", "--env.docker.image", image],
    ...["--orchestrator.rollout_retries", "2"],
    // the engine as the one entry of [env.docker] hosts: drained while it does not answer, readmitted after
    ...(options.hosts ? ["--env.docker.hosts", '[{url="unix:///var/run/docker.sock", sandboxes=4}]'] : []),
  ]);
  const { runDir } = run;
  const pids = watchPids(runDir);
  try {
    await until(() => (progressStep(runDir) ?? -1) >= 0 || run.child.exitCode !== null, 5 * 60_000);
    await Bun.sleep(rand() * 3000);
    run.mark(`restarting dockerd (pid ${pid})`);
    const downMs = await restartMainDockerd(docker, pid, join(out, "dockerd-restart.log"));
    run.mark(`dockerd answers again after ${downMs} ms`);
    const code = await run.exited;
    pids.stop();
    const left = await leftAfterExit(docker, runDir, pids.seen);
    const { store, counts } = runCounts(runDir, code === 0 ? STEPS : undefined);
    const outcome: Outcome = {
      expected: code === 0,
      left,
      ...counts,
      detail: `exit ${code}, engine down ${(downMs / 1000).toFixed(1)} s, ${store.failed} rollout(s) failed`,
    };
    if (code !== 0 || left.length > 0 || store.lost + store.doubled > 0)
      outcome.kept = keepLogs(out, runDir, "dockerd-restart");
    return outcome;
  } finally {
    pids.stop();
    run.child.kill("SIGKILL");
    await ensureMainDockerd(docker);
    removeRun(out);
  }
}
