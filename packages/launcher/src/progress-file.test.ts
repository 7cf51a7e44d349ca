import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RUN_FILES, readLastCompletedStep } from "./rundir.ts";
import { removeTempDirs, startLauncher, tempDir, writeFixtureConfig } from "./test-helpers.ts";

afterAll(removeTempDirs);

test("readLastCompletedStep: none without a file, the step with one, an error naming a malformed one", () => {
  const dir = tempDir("progress");
  expect(readLastCompletedStep(dir)).toBeUndefined();
  writeFileSync(join(dir, RUN_FILES.progress), JSON.stringify({ lastCompletedStep: 4 }));
  expect(readLastCompletedStep(dir)).toBe(4);
  writeFileSync(join(dir, RUN_FILES.progress), '{"lastCompletedStep": 4');
  expect(() => readLastCompletedStep(dir)).toThrow(/progress\.json is not valid JSON/);
  writeFileSync(join(dir, RUN_FILES.progress), JSON.stringify({ lastCompletedStep: "four" }));
  expect(() => readLastCompletedStep(dir)).toThrow(/lastCompletedStep must be a step number/);
});

test("rl --resume with a malformed progress.json exits 2 naming it, and leaves the run dir as it was", async () => {
  const fx = await writeFixtureConfig({ maxSteps: 2 });
  mkdirSync(fx.runDir, { recursive: true });
  const progress = join(fx.runDir, RUN_FILES.progress);
  writeFileSync(progress, "{ truncated");
  const run = startLauncher([fx.file, "--resume"]);
  expect(await run.done).toBe(2);
  expect(run.stderr()).toContain(`${progress} is not valid JSON`);
  expect(readFileSync(progress, "utf8")).toBe("{ truncated");
  expect(existsSync(join(fx.runDir, RUN_FILES.config))).toBe(false);
}, 60_000);
