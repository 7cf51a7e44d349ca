import { afterAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { isAlive, processesWithEnv } from "./proc.ts";
import { readPidFile } from "./rundir.ts";
import { RUN_MARKER } from "./supervisor.ts";
import { fakePath, REPO_ROOT, removeTempDirs, writeFixtureConfig } from "./test-helpers.ts";

afterAll(removeTempDirs);

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await Bun.sleep(100);
  }
  return check();
}

// `bun run rl` is a wrapper process whose child is the real launcher (bin/rl.ts). Killing the wrapper with
// SIGKILL used to leave the launcher, the inference server and the trainer running headless.
test("SIGKILL of the `bun run rl` wrapper ends the launcher and every process of the run", async () => {
  const fx = await writeFixtureConfig({ policyDelayMs: 60_000, maxSteps: 3 });
  const wrapper = spawn(process.execPath, ["run", "rl", fx.file], {
    cwd: REPO_ROOT,
    env: { ...process.env, PATH: fakePath() },
    stdio: ["ignore", "ignore", "ignore"],
  });
  try {
    const started = await until(() => (readPidFile(fx.runDir)?.children.length ?? 0) >= 2, 60_000);
    expect(started).toBe(true);
    const pids = readPidFile(fx.runDir)!;
    expect(pids.launcher.pid).not.toBe(wrapper.pid);
    wrapper.kill("SIGKILL");
    const gone = () =>
      !isAlive(pids.launcher.pid, pids.launcher.startTime) &&
      pids.children.every((c) => !isAlive(c.pid, c.startTime)) &&
      processesWithEnv(RUN_MARKER, fx.runDir).length === 0;
    expect(await until(gone, 20_000)).toBe(true);
  } finally {
    wrapper.kill("SIGKILL");
    for (const p of processesWithEnv(RUN_MARKER, fx.runDir)) process.kill(p.pid, "SIGKILL");
    const pids = readPidFile(fx.runDir);
    if (pids && isAlive(pids.launcher.pid, pids.launcher.startTime))
      process.kill(pids.launcher.pid, "SIGKILL");
  }
}, 90_000);
