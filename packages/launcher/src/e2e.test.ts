import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RUN_FILES } from "./rundir.ts";
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

afterAll(removeTempDirs);

const CONFIG = join(REPO_ROOT, "configs", "dataset", "debug.toml");
let current: { run?: LauncherRun; runDir?: string } = {};
afterEach(() => {
  if (current.runDir) killSurvivors(current.run, current.runDir);
  current = {};
});

describe("end to end on CPU (real tiny server and trainer)", () => {
  test("configs/dataset/debug.toml runs two steps through the launcher from another directory; each step line once, on stdout", async () => {
    const out = tempDir("e2e");
    const runDir = join(out, "dataset-debug");
    const port = await freePort();
    const run = startLauncher(
      [
        CONFIG,
        "--run.max_steps=2",
        `--run.output_dir="${out}"`,
        `--trainer.run_dir="${runDir}"`,
        `--inference.port=${port}`,
        `--policy.base_url="http://127.0.0.1:${port}/v1"`,
        // loggers that print step lines themselves are left out: `rl` prints them, once, on its stdout
        '--logger=[{ plugin = "console" }, { plugin = "step-line", stream = "stderr" }, { plugin = "sqlite" }]',
      ],
      { cwd: out, timeoutMs: 90_000 },
    );
    current = { run, runDir };
    expect(await run.done).toBe(0);
    const steps = (text: string) => text.split("\n").filter((l) => /^step \d/.test(l));
    expect(steps(run.stdout()).map((l) => l.split(" |")[0])).toEqual(["step 0 (1/2)", "step 1 (2/2)"]);
    expect(steps(run.stderr())).toEqual([]);
    expect(run.stderr()).not.toMatch(/^run completed$/m); // the console logger's end line
    const progress = JSON.parse(readFileSync(join(runDir, RUN_FILES.progress), "utf8"));
    expect(progress.lastCompletedStep).toBe(1);
    expect(readFileSync(join(runDir, "logs", "inference.log"), "utf8")).toContain('"event": "listening"');
    expect(readFileSync(join(runDir, "logs", "trainer.log"), "utf8")).toContain('"event": "step", "step": 1');
    expect(existsSync(join(runDir, "air.db"))).toBe(true);
    expect(survivors(run, runDir)).toEqual([]);
    expect(existsSync(join(runDir, RUN_FILES.pid))).toBe(false);
  }, 120_000);
});
