import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastStableStep, primeRlPaths as paths } from "@air/trainer-prime-rl";
import { resolveConfig } from "./cli.ts";
import { processContext } from "./process-kinds.ts";
import { planOf } from "./run-plan.ts";
import { RUN_FILES, readPidFile } from "./rundir.ts";
import type { Supervised } from "./supervisor.ts";
import {
  freePort,
  killSurvivors,
  type LauncherRun,
  REPO_ROOT,
  removeTempDirs,
  startLauncher,
  survivors,
  tempDir,
} from "./test-helpers.ts";
import { prepareRestart, RestartBudget } from "./trainer-restart.ts";

/** The step a restarted trainer resumes from, as the launcher asks it (on the run's plan). */
function restartStep(config: Parameters<typeof planOf>[0]): number | undefined {
  const plan = planOf(config);
  return prepareRestart(plan.config.plugins.trainer, plan.launch);
}

type Config = Parameters<typeof processContext>[0];
const primeRlPaths = (c: Config) => paths(processContext(c));

afterAll(removeTempDirs);

const CONFIG = join(REPO_ROOT, "configs", "dataset", "debug.toml");
let current: { run?: LauncherRun; runDir?: string } = {};
afterEach(() => {
  if (current.runDir) killSurvivors(current.run, current.runDir);
  current = {};
});

const child = (role: string): Pick<Supervised, "spec"> => ({ spec: { role, argv: ["x"] } });

describe("trainer restart logic", () => {
  test("the budget restarts only the trainer, at most max_restarts times over the run", () => {
    const budget = new RestartBudget(2);
    expect(budget.take(child("inference"))).toBe(false);
    expect([
      budget.take(child("trainer")),
      budget.take(child("trainer")),
      budget.take(child("trainer")),
    ]).toEqual([true, true, false]);
    expect(budget.failure(child("trainer"), "trainer exited with code 1")).toContain(
      "restarted 2 time(s); [trainer_process] max_restarts = 2",
    );
    expect(new RestartBudget(0).take(child("trainer"))).toBe(false);
  });

  test("the resume point is the newest broadcast with STABLE (a half-written one does not count)", () => {
    const dir = tempDir("stable");
    expect(lastStableStep(dir)).toBeUndefined();
    for (const [step, stable] of [
      [1, true],
      [2, true],
      [10, true],
      [11, false],
    ] as const) {
      mkdirSync(join(dir, "broadcasts", `step_${step}`), { recursive: true });
      if (stable) writeFileSync(join(dir, "broadcasts", `step_${step}`, "STABLE"), "");
    }
    expect(lastStableStep(dir)).toBe(10);
  });

  test("a crash in step 1 (only the startup broadcasts/step_0 has STABLE) restarts fresh, never resume.step = 0", async () => {
    const out = tempDir("step0");
    const config = await resolveConfig(CONFIG, [`--run.output_dir="${out}"`]);
    const { runDir, outputDir } = primeRlPaths(config);
    mkdirSync(join(runDir, "broadcasts", "step_0"), { recursive: true });
    writeFileSync(join(runDir, "broadcasts", "step_0", "STABLE"), "");
    expect(lastStableStep(runDir)).toBe(0);
    expect(restartStep(config)).toBeUndefined();
    // later: step 2 finished and checkpointed, step 3 finished, its checkpoint not written yet
    for (const s of [1, 2, 3]) {
      mkdirSync(join(runDir, "broadcasts", `step_${s}`), { recursive: true });
      writeFileSync(join(runDir, "broadcasts", `step_${s}`, "STABLE"), "");
    }
    mkdirSync(join(outputDir, "checkpoints", "step_2", "trainer"), { recursive: true });
    writeFileSync(join(outputDir, "checkpoints", "step_2", "trainer", ".metadata"), "");
    expect(restartStep(config)).toBe(2);
    // step 3's save was killed after its payload, before .metadata: still checkpoint 2
    mkdirSync(join(outputDir, "checkpoints", "step_3", "trainer"), { recursive: true });
    writeFileSync(join(outputDir, "checkpoints", "step_3", "trainer", "__0_0.distcp"), "");
    expect(restartStep(config)).toBe(2);
  });
});

function rlSync(args: string[]): { code: number; stderr: string } {
  const out = Bun.spawnSync(["bun", join(REPO_ROOT, "packages/launcher/src/bin/rl.ts"), ...args], {
    stdout: "ignore",
    stderr: "pipe",
  });
  return { code: out.exitCode ?? -1, stderr: out.stderr.toString() };
}

describe("rl validate: [trainer_process] max_restarts", () => {
  test("a negative count, a restart over ZMQ and a multi-node restart exit 2 naming the key", () => {
    const negative = rlSync(["validate", CONFIG, "--trainer_process.max_restarts", "-1"]);
    expect(negative.code).toBe(2);
    expect(negative.stderr).toContain("trainer_process.max_restarts");
    const zmq = rlSync([
      "validate",
      CONFIG,
      "--trainer_process.max_restarts",
      "2",
      "--trainer.transport",
      "zmq",
    ]);
    expect(zmq.code).toBe(2);
    expect(zmq.stderr).toContain(
      "trainer_process.max_restarts: a restarted trainer cannot get back the batch",
    );
    const multiNode = rlSync([
      "validate",
      CONFIG,
      ...["--trainer_process.max_restarts", "1", "--trainer_process.nnodes", "2"],
    ]);
    expect(multiNode.code).toBe(2);
    expect(multiNode.stderr).toContain(
      "trainer_process.max_restarts: one node's ranks cannot be restarted alone",
    );
    expect(rlSync(["validate", CONFIG, "--trainer_process.max_restarts", "2"]).code).toBe(0);
  }, 60_000);

  test("restarts without trainer checkpoints exit 2 naming both keys", () => {
    const prime = ["--trainer_process.kind", "prime-rl", "--trainer_process.max_restarts", "1"];
    const none = rlSync(["validate", CONFIG, ...prime, "--trainer_process.ckpt_interval", "0"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("trainer_process.max_restarts = 1 needs trainer checkpoints");
    expect(none.stderr).toContain("trainer_process.ckpt_interval sets none");
    expect(rlSync(["validate", CONFIG, ...prime]).code).toBe(0);
  }, 60_000);
});

/** Waits (bounded) for a trainer pid in the run's pid file other than `not`. */
async function trainerPid(runDir: string, not: number[], timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const pid = readPidFile(runDir)?.children.find((c) => c.role === "trainer")?.pid;
    if (pid && !not.includes(pid)) return pid;
    await Bun.sleep(50);
  }
  throw new Error(`no new trainer pid in ${runDir} after ${timeoutMs} ms`);
}

/** Waits (bounded) until the trainer's metrics file has `rows` rows. */
async function metricsRows(file: string, rows: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (existsSync(file) && readFileSync(file, "utf8").trim().split("\n").filter(Boolean).length >= rows)
      return;
    await Bun.sleep(50);
  }
  throw new Error(`${file}: fewer than ${rows} rows after ${timeoutMs} ms`);
}

async function launchDebug(maxSteps: number, maxRestarts: number) {
  const out = tempDir("restart");
  const runDir = join(out, "dataset-debug");
  const port = await freePort();
  const run = startLauncher(
    [
      CONFIG,
      `--run.max_steps=${maxSteps}`,
      `--run.output_dir="${out}"`,
      `--inference.port=${port}`,
      `--policy.base_url="http://127.0.0.1:${port}/v1"`,
      `--trainer_process.max_restarts=${maxRestarts}`,
    ],
    { cwd: out, timeoutMs: 150_000 },
  );
  current = { run, runDir };
  return { run, runDir, metrics: join(runDir, "prime-rl", "metrics.jsonl") };
}

describe("a crashed trainer is restarted (real tiny server and trainer)", () => {
  test("SIGKILL of the trainer mid-run: restarted once, every step trained exactly once, exit 0", async () => {
    const { run, runDir, metrics } = await launchDebug(5, 1);
    await metricsRows(metrics, 1);
    process.kill(await trainerPid(runDir, []), "SIGKILL");
    expect(await run.done).toBe(0);
    expect(run.stderr()).toContain("trainer was killed by SIGKILL");
    expect(run.stderr()).toContain("restarting the trainer (restart 1 of 1)");
    const steps = readFileSync(metrics, "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { step: number }).step);
    expect(steps).toEqual([1, 2, 3, 4, 5]);
    const progress = JSON.parse(readFileSync(join(runDir, RUN_FILES.progress), "utf8"));
    expect(progress.lastCompletedStep).toBe(4);
    expect(readFileSync(join(runDir, "logs", "trainer.log"), "utf8").match(/"event": "ready"/g)?.length).toBe(
      2,
    );
    expect(survivors(run, runDir)).toEqual([]);
  }, 180_000);

  test("SIGKILL in step 1 (only the startup broadcasts/step_0 exists): restarted fresh, never resume.step = 0", async () => {
    const { run, runDir, metrics } = await launchDebug(4, 1);
    const stable = join(runDir, "prime-rl", "broadcasts", "step_0", "STABLE");
    const deadline = Date.now() + 60_000;
    while (!existsSync(stable) && Date.now() < deadline) await Bun.sleep(20);
    expect(existsSync(stable)).toBe(true);
    const pid = await trainerPid(runDir, []);
    const rows = () =>
      existsSync(metrics) ? readFileSync(metrics, "utf8").trim().split("\n").filter(Boolean).length : 0;
    process.kill(pid, "SIGKILL");
    expect(rows()).toBe(0); // killed before step 1 was trained
    expect(await run.done).toBe(0);
    expect(run.stderr()).toContain("restarting the trainer (restart 1 of 1)");
    expect(readFileSync(join(runDir, "configs", "trainer.toml"), "utf8")).not.toContain("[resume]");
    const steps = readFileSync(metrics, "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { step: number }).step);
    expect(steps).toEqual([1, 2, 3, 4]);
    expect(survivors(run, runDir)).toEqual([]);
  }, 180_000);

  test("past max_restarts the run stops with exit 1 naming the bound, nothing left", async () => {
    const { run, runDir, metrics } = await launchDebug(40, 1);
    await metricsRows(metrics, 1);
    const first = await trainerPid(runDir, []);
    process.kill(first, "SIGKILL");
    process.kill(await trainerPid(runDir, [first]), "SIGKILL");
    expect(await run.done).toBe(1);
    expect(run.stderr()).toContain("restarted 1 time(s); [trainer_process] max_restarts = 1");
    expect(survivors(run, runDir)).toEqual([]);
    expect(existsSync(join(runDir, RUN_FILES.pid))).toBe(false);
  }, 180_000);
});
