import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { leftAfterExit, type Outcome, watchPids } from "./faults-rows.ts";
import { runCounts, startRl } from "./faults-run.ts";
import { keepLogs, progressStep, readPidFile, removeRun, until } from "./faults-util.ts";

const STEPS = 8;

/** The trainer's pid in the pid file once it is not one of `not` (a restarted trainer), within `timeoutMs`. */
async function newTrainer(runDir: string, not: number[], timeoutMs = 60_000): Promise<number | undefined> {
  let pid: number | undefined;
  await until(() => {
    pid = readPidFile(runDir)?.children.find((c) => c.role === "trainer")?.pid;
    return pid !== undefined && !not.includes(pid);
  }, timeoutMs);
  return pid !== undefined && !not.includes(pid) ? pid : undefined;
}

/**
 * A quickstart run (local runtime, 8 steps, `[trainer_process] max_restarts = maxRestarts`) whose trainer is
 * SIGKILLed `kills` times at random moments once a step has completed. Within the bound the run must finish (exit
 * 0) with every step's rollouts once in the store and every prime-rl step trained exactly once; past it, it must
 * stop with exit 1 naming the bound. Either way nothing of it may be left 10 s after it exits.
 */
export async function trainerCrashRun(
  maxRestarts: number,
  kills: number,
  rand: () => number,
): Promise<Outcome> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-trainer-"));
  const run = await startRl(out, "q", [
    ...["--run.max_steps", String(STEPS), "--trainer_process.max_restarts", String(maxRestarts)],
  ]);
  const { runDir } = run;
  const pids = watchPids(runDir);
  const withinBound = kills <= maxRestarts;
  try {
    await until(() => (progressStep(runDir) ?? -1) >= 0, 5 * 60_000);
    const killed: number[] = [];
    for (let i = 0; i < kills; i++) {
      const pid = await newTrainer(runDir, killed);
      if (pid === undefined) break;
      await Bun.sleep(500 + rand() * 3000);
      if (run.child.exitCode !== null) break;
      run.mark(`SIGKILL to the trainer (pid ${pid}), kill ${i + 1} of ${kills}`);
      process.kill(pid, "SIGKILL");
      killed.push(pid);
    }
    const code = await run.exited;
    pids.stop();
    const left = await leftAfterExit(undefined, runDir, pids.seen);
    const text = run.text();
    const restarts = text.match(/restarting the trainer \(restart \d+ of \d+\)/g)?.length ?? 0;
    let outcome: Outcome;
    if (withinBound) {
      const { counts } = runCounts(runDir, STEPS);
      const expected = code === 0 && killed.length === kills && restarts === kills;
      outcome = {
        expected,
        left,
        ...counts,
        detail: `exit ${code}, ${killed.length} kill(s), ${restarts} restart(s)`,
      };
    } else {
      const named = text.includes(`[trainer_process] max_restarts = ${maxRestarts}`);
      outcome = {
        expected: code === 1 && named,
        left,
        detail: `exit ${code} after ${restarts} restart(s)${named ? ", error names max_restarts" : ", bound not named"}`,
      };
    }
    const clean = outcome.lost === undefined || outcome.lost + (outcome.doubled ?? 0) === 0;
    if (!outcome.expected || left.length > 0 || !clean) outcome.kept = keepLogs(out, runDir, "trainer-crash");
    return outcome;
  } finally {
    pids.stop();
    run.child.kill("SIGKILL");
    removeRun(out);
  }
}
