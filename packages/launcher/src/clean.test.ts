import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { dockerReachable, runContainers } from "./containers.ts";
import { isAlive, listProcs } from "./proc.ts";
import { RUN_FILES, readPidFile } from "./rundir.ts";
import {
  killSurvivors,
  type LauncherRun,
  type RunFixture,
  removeTempDirs,
  startLauncher,
  survivors,
  writeFixtureConfig,
} from "./test-helpers.ts";

afterAll(removeTempDirs);

const TEST_IMAGE = process.env.AIR_TEST_IMAGE ?? "air-mlgym-test:latest";
const dockerUp = await dockerReachable();
if (!dockerUp && process.env.CI === "true") throw new Error("CI=true but no docker engine is reachable");
const createdRuns: string[] = [];

let current: { run?: LauncherRun; fx?: RunFixture } = {};
afterEach(() => {
  if (current.fx) killSurvivors(current.run, current.fx.runDir);
  current = {};
});
afterAll(() => {
  if (!dockerUp) return;
  for (const name of createdRuns) {
    const ids = spawnSync("docker", ["ps", "-aq", "--filter", `label=air.run=${name}`], { encoding: "utf8" });
    for (const id of ids.stdout.split("\n").filter(Boolean)) spawnSync("docker", ["rm", "-f", id]);
  }
});

/** SIGKILLs the reaper of a run (so a test sees what `rl clean` alone does); expects exactly one. */
function killReaper(runDir: string): void {
  const reapers = listProcs().filter((p) => {
    try {
      const cmd = readFileSync(`/proc/${p.pid}/cmdline`, "utf8");
      return cmd.includes("reaper.ts") && cmd.includes(runDir);
    } catch {
      return false;
    }
  });
  expect(reapers.length).toBe(1);
  for (const r of reapers) process.kill(r.pid, "SIGKILL");
}

function rl(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const out = spawnSync(process.execPath, [join(import.meta.dir, "bin", "rl.ts"), ...args], {
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe("rl clean", () => {
  test("stops the children of a launcher that was SIGKILLed (pid file and run marker)", async () => {
    const fx = await writeFixtureConfig({ policyDelayMs: 60_000, maxSteps: 5, vllmMode: "ignore-term" });
    const run = startLauncher([fx.file]);
    current = { run, fx };
    await run.waitFor(/trainer running/);
    killReaper(fx.runDir);
    run.child.kill("SIGKILL");
    await run.done;
    const pids = readPidFile(fx.runDir);
    expect(pids?.children.map((c) => c.role).sort()).toEqual(["inference", "trainer"]);
    expect(pids?.children.some((c) => isAlive(c.pid, c.startTime))).toBe(true);
    const out = rl(["clean", fx.outputDir, "--grace-ms", "500"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("sent SIGTERM to inference process group");
    expect(out.stdout).toContain("killed inference process group");
    expect(survivors(run, fx.runDir)).toEqual([]);
    expect(existsSync(join(fx.runDir, RUN_FILES.pid))).toBe(false);
  }, 300_000);

  test("a live earlier run in the output dir makes the next launch refuse with the stop command", async () => {
    const fx = await writeFixtureConfig({ policyDelayMs: 60_000, maxSteps: 5, withTrainer: false });
    const run = startLauncher([fx.file]);
    current = { run, fx };
    await run.waitFor(/inference ready/);
    const second = rl(["check", fx.file]);
    expect(second.code).toBe(2);
    expect(second.stdout).toContain("a previous run is still alive");
    expect(second.stdout).toContain(`clean ${fx.outputDir}`);
    run.child.kill("SIGTERM");
    expect(await run.done).toBe(130);
    expect(survivors(run, fx.runDir)).toEqual([]);
  }, 300_000);

  test("stops a live run through its launcher, which tears down in order", async () => {
    const fx = await writeFixtureConfig({ policyDelayMs: 60_000, maxSteps: 5 });
    const run = startLauncher([fx.file]);
    current = { run, fx };
    await run.waitFor(/trainer running/);
    const out = rl(["clean", fx.outputDir]);
    expect(out.stdout).toContain(`sent SIGTERM to launcher pid ${run.child.pid}`);
    expect(await run.done).toBe(130);
    expect(run.stderr()).toContain("SIGTERM: stopping the run");
    expect(survivors(run, fx.runDir)).toEqual([]);
  }, 300_000);

  test("with nothing left, says so", async () => {
    const fx = await writeFixtureConfig();
    const out = rl(["clean", fx.outputDir]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("nothing to clean");
  });
});

/** A fixture run whose env has started its container (labelled with the run dir), its trainer running. */
async function runWithContainer(): Promise<{ fx: RunFixture; run: LauncherRun; name: string }> {
  const fx = await writeFixtureConfig({ containerImage: TEST_IMAGE, policyDelayMs: 60_000, maxSteps: 3 });
  const name = fx.runDir;
  createdRuns.push(name);
  const run = startLauncher([fx.file]);
  current = { run, fx };
  await run.waitFor(/trainer running/);
  // generous: on a busy 2-core machine the env's container takes seconds to appear
  const deadline = Date.now() + 120_000;
  while ((await runContainers(name)).length === 0 && Date.now() < deadline) await Bun.sleep(100);
  return { fx, run, name };
}

describe.skipIf(!dockerUp)("containers labelled with the run", () => {
  test("are removed at teardown, whatever ended the run", async () => {
    const { fx, run, name } = await runWithContainer();
    expect((await runContainers(name)).length).toBe(1);
    run.child.kill("SIGINT");
    expect(await run.done).toBe(130);
    expect(await runContainers(name)).toEqual([]);
    expect(survivors(run, fx.runDir)).toEqual([]);
  }, 300_000);

  test("SIGKILL of the launcher: its reaper stops the children and removes the containers", async () => {
    const { fx, run, name } = await runWithContainer();
    expect((await runContainers(name)).length).toBe(1);
    run.child.kill("SIGKILL");
    await run.done;
    const deadline = Date.now() + 90_000;
    while (
      ((await runContainers(name)).length > 0 || survivors(run, fx.runDir).length > 0) &&
      Date.now() < deadline
    )
      await Bun.sleep(200);
    expect(await runContainers(name)).toEqual([]);
    expect(survivors(run, fx.runDir)).toEqual([]);
    expect(readFileSync(join(fx.runDir, "logs", "reaper.log"), "utf8")).toContain("is gone; cleaning up");
  }, 300_000);

  test("rl clean removes the containers of a run whose launcher and reaper were both SIGKILLed", async () => {
    const { fx, run, name } = await runWithContainer();
    killReaper(fx.runDir);
    run.child.kill("SIGKILL");
    await run.done;
    expect((await runContainers(name)).length).toBe(1);
    const out = rl(["clean", fx.outputDir]);
    expect(out.stdout).toContain("removed container");
    expect(await runContainers(name)).toEqual([]);
    expect(survivors(run, fx.runDir)).toEqual([]);
  }, 300_000);
});
