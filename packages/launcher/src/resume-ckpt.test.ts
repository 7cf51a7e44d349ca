import { afterEach, expect, test } from "bun:test";
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

afterEach(removeTempDirs);

const CONFIG = join(REPO_ROOT, "configs", "dataset", "debug.toml");
const runs = killSurvivorsAfterEach();

test("kill -9 of everything, then --resume: the prime-rl trainer (CPU stand-in) loads its checkpoint, every step trained once", async () => {
  const out = tempDir("ckpt");
  const runDir = join(out, "dataset-debug");
  const port = await freePort();
  const args = [
    CONFIG,
    "--run.max_steps=12",
    `--run.output_dir="${out}"`,
    `--inference.port=${port}`,
    `--policy.base_url="http://127.0.0.1:${port}/v1"`,
  ];
  const first = startLauncher(args, { cwd: out, timeoutMs: 240_000 });
  runs.current = { run: first, runDir };
  const deadline = Date.now() + 180_000;
  while ((readLastCompletedStep(runDir) ?? -1) < 2) {
    if (Date.now() > deadline || first.child.exitCode !== null)
      throw new Error(`no step 2 within 180 s:\n${first.stderr()}`);
    await Bun.sleep(50);
  }
  killEverything(first, runDir);
  await first.done;
  const stoppedAt = readLastCompletedStep(runDir) ?? -1;

  const second = startLauncher([...args, "--resume"], { cwd: out, timeoutMs: 240_000 });
  runs.current = { run: second, runDir };
  expect(await second.done).toBe(0);
  expect(second.stderr()).toContain(`resuming ${runDir} at step ${stoppedAt + 1}`);
  const toml = readFileSync(join(runDir, "configs", "trainer.toml"), "utf8");
  const resumed = Number(/\[resume\]\nstep = (\d+)/.exec(toml)?.[1]);
  // the checkpoint of the last step air recorded (interval 1), never step 0
  expect(resumed).toBe(stoppedAt + 1);
  const steps = readFileSync(join(runDir, "prime-rl", "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as { step: number }).step);
  expect(steps).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  expect(second.stderr()).toContain("run completed: ");
  expect(existsSync(join(runDir, "final-weights"))).toBe(true);
  expect(survivors(second, runDir)).toEqual([]);
}, 480_000);
