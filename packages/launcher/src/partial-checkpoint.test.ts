import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readLastCompletedStep } from "./rundir.ts";
import {
  freePort,
  killEverything,
  killSurvivorsAfterEach,
  REPO_ROOT,
  removeTempDirs,
  startLauncher,
  survivors,
  tempDir,
} from "./test-helpers.ts";

// A trainer that dies mid-save (OOM, kill -9, preemption) leaves a checkpoint without DCP's `.metadata`, which
// prime-rl writes after STABLE and before the step's metrics row (trainer/rl/train.py). The CPU stand-in is told
// to stop right there (AIR_TINY_CKPT_STOP_*, packages/tiny README), or to save slowly; the real launcher, server
// and trainer run configs/dataset/debug.toml.

afterAll(removeTempDirs);

const CONFIG = join(REPO_ROOT, "configs", "dataset", "debug.toml");
/** Bound on waiting for a state of the run (busy 2-core CI machine). */
const STATE_WAIT_MS = 180_000;
const runs = killSurvivorsAfterEach();

async function debugRun(extra: string[], env: Record<string, string>) {
  const out = tempDir("partial-ckpt");
  const runDir = join(out, "dataset-debug");
  const port = await freePort();
  const envToml = Object.entries(env)
    .map(([k, v]) => `${k} = "${v}"`)
    .join(", ");
  const args = [
    CONFIG,
    `--run.output_dir="${out}"`,
    `--inference.port=${port}`,
    `--policy.base_url="http://127.0.0.1:${port}/v1"`,
    `--trainer_process.env={ ${envToml} }`,
    ...extra,
  ];
  return { out, runDir, args };
}

/** The prime-rl steps of the trainer's metrics rows, in file order (a step trained twice shows twice). */
function metricsSteps(runDir: string): number[] {
  return readFileSync(join(runDir, "prime-rl", "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as { step: number }).step);
}

/** `[resume] step` of the trainer TOML the launcher wrote last (undefined: a fresh start). */
function resumeStep(runDir: string): number | undefined {
  const m = /\[resume\]\nstep = (\d+)/.exec(readFileSync(join(runDir, "configs", "trainer.toml"), "utf8"));
  return m ? Number(m[1]) : undefined;
}

/** The air steps whose `trainer/loss` reached the run's store (what the step lines and the dashboard show). */
function stepsWithLoss(runDir: string): number[] {
  const db = new Database(join(runDir, "air.db"), { readonly: true });
  const rows = db
    .query("SELECT DISTINCT step FROM metrics WHERE name = 'trainer/loss' ORDER BY step")
    .all() as Array<{ step: number }>;
  db.close();
  return rows.map((r) => r.step);
}

const checkpointFile = (runDir: string, step: number, name: string) =>
  join(runDir, "prime-rl", "checkpoints", `step_${step}`, "trainer", name);

test("trainer SIGKILLed after checkpoint 3's payload, before its .metadata, max_restarts = 1: restarted from checkpoint 2, every step trained once", async () => {
  const { out, runDir, args } = await debugRun(["--run.max_steps=5", "--trainer_process.max_restarts=1"], {
    AIR_TINY_CKPT_STOP_AT: "3",
    AIR_TINY_CKPT_STOP_HOW: "kill",
    AIR_TINY_CKPT_STOP_ONCE: join(tempDir("stop-once"), "stopped"),
  });
  const run = startLauncher(args, { cwd: out, timeoutMs: 300_000 });
  runs.current = { run, runDir };
  expect(await run.done).toBe(0);
  expect(run.stderr()).toContain("restarting the trainer (restart 1 of 1)");
  // STABLE 3 was there, its checkpoint was not: the restart loads checkpoint 2 and trains step 3 again
  expect(resumeStep(runDir)).toBe(2);
  const log = readFileSync(join(runDir, "logs", "trainer.log"), "utf8");
  expect(log).toContain("stopping (kill) between the payload and .metadata of checkpoint step 3");
  expect(log.match(/"event": "ready", "step": \d+/g)).toEqual([
    '"event": "ready", "step": 1',
    '"event": "ready", "step": 3',
  ]);
  expect(metricsSteps(runDir)).toEqual([1, 2, 3, 4, 5]);
  expect(stepsWithLoss(runDir)).toEqual([0, 1, 2, 3, 4]);
  expect(existsSync(checkpointFile(runDir, 5, ".metadata"))).toBe(true);
  expect(survivors(run, runDir)).toEqual([]);
}, 360_000);

test("kill -9 of everything while checkpoint 3 has its payload and no .metadata, then --resume: continues from checkpoint 2, every step trained once", async () => {
  // metrics_wait_ms = 0: air records step 2 (prime-rl step 3) as soon as STABLE 3 is there, before the save
  // finishes — the resume point whose own checkpoint is half-written.
  const { out, runDir, args } = await debugRun(["--run.max_steps=6", "--trainer.metrics_wait_ms=0"], {
    AIR_TINY_CKPT_STOP_AT: "3",
    AIR_TINY_CKPT_STOP_HOW: "hang",
    AIR_TINY_CKPT_STOP_ONCE: join(tempDir("stop-once"), "stopped"),
  });
  const first = startLauncher(args, { cwd: out, timeoutMs: 300_000 });
  runs.current = { run: first, runDir };
  const deadline = Date.now() + STATE_WAIT_MS;
  while (
    !existsSync(checkpointFile(runDir, 3, "__0_0.distcp")) ||
    (readLastCompletedStep(runDir) ?? -1) < 2
  ) {
    if (Date.now() > deadline || first.child.exitCode !== null)
      throw new Error(`no half-written checkpoint 3 within ${STATE_WAIT_MS} ms:\n${first.stderr()}`);
    await Bun.sleep(50);
  }
  expect(existsSync(checkpointFile(runDir, 3, ".metadata"))).toBe(false);
  killEverything(first, runDir);
  await first.done;
  const stoppedAt = readLastCompletedStep(runDir) ?? -1;
  expect(stoppedAt).toBe(2);

  const second = startLauncher([...args.filter((a) => !a.startsWith("--trainer.metrics")), "--resume"], {
    cwd: out,
    timeoutMs: 300_000,
  });
  runs.current = { run: second, runDir };
  expect(await second.done).toBe(0);
  // the weights of prime-rl step 3, set aside before the trainer trains step 3 again and rewrites its broadcast
  expect(second.stderr()).toContain(
    `resuming ${runDir} at step 3 from weights ${join(runDir, "prime-rl", "resume-weights", "step_3")}`,
  );
  expect(resumeStep(runDir)).toBe(2);
  // prime-rl step 3 trained again from checkpoint 2 (its row was never written: it comes after the save)
  expect(metricsSteps(runDir)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(second.stderr()).toContain("run completed: ");
  expect(survivors(second, runDir)).toEqual([]);
}, 480_000);

test("a checkpoint save slower than the old 5 s metrics wait: every step still carries the trainer's loss", async () => {
  const { out, runDir, args } = await debugRun(["--run.max_steps=3"], { AIR_TINY_CKPT_SAVE_DELAY_S: "6" });
  const run = startLauncher(args, { cwd: out, timeoutMs: 300_000 });
  runs.current = { run, runDir };
  expect(await run.done).toBe(0);
  expect(stepsWithLoss(runDir)).toEqual([0, 1, 2]);
  expect(run.stderr()).not.toContain("no trainer loss in its step line");
  expect(survivors(run, runDir)).toEqual([]);
}, 360_000);
