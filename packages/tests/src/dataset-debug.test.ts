import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  freePort,
  killSurvivors,
  type LauncherRun,
  REPO_ROOT,
  removeTempDirs,
  startLauncher,
  survivors,
  tempDir,
} from "@air/launcher/testing";
import { checkStepLines, perStepLogLines } from "@air/loggers/testing";
import { commandPaths, documentedCommands, documentedOutputs, runDirOf } from "./test-docs.ts";

/**
 * configs/dataset/debug.toml as its comment tells a user to use it, at its own step count: `bun run rl` it (the
 * launcher, the real tiny server and trainer), read its step lines back against the store, then run each
 * `bun run eval` command the comment quotes, with the paths it names mapped into the test's output dir; every
 * output path the docs name in this config's run dir must exist after the run.
 */
const CONFIG = "configs/dataset/debug.toml";
afterAll(removeTempDirs);

let current: { run?: LauncherRun; runDir?: string } = {};
afterEach(() => {
  if (current.runDir) killSurvivors(current.run, current.runDir);
  current = {};
});

/** Runs the eval entry with `args` from the repository root; resolves with its exit code and output. */
async function evalCommand(args: string[]): Promise<{ code: number; output: string }> {
  const child = Bun.spawn(["bun", join(REPO_ROOT, "packages/launcher/src/bin/eval.ts"), ...args], {
    cwd: REPO_ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
  const [code, out, err] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  clearTimeout(timer);
  return { code, output: `${out}${err}` };
}

describe("configs/dataset/debug.toml, as documented", () => {
  test("the run's step lines hold against the store; the quoted eval commands run on what it left", async () => {
    const out = tempDir("dataset-debug-docs");
    const documentedRunDir = runDirOf(CONFIG);
    const runDir = join(out, "dataset-debug");
    expect(documentedRunDir.endsWith("/dataset-debug")).toBe(true);
    const port = await freePort();
    const serverArgs = [`--inference.port=${port}`, `--policy.base_url=http://127.0.0.1:${port}/v1`];
    const run = startLauncher([join(REPO_ROOT, CONFIG), `--run.output_dir=${out}`, ...serverArgs], {
      cwd: out,
      timeoutMs: 150_000,
    });
    current = { run, runDir };
    expect(await run.done).toBe(0);
    // Step lines: seconds and turns/s over the time really spent (one-turn rollouts are done before their
    // step's line), and no column a dataset env cannot produce (rubric rewards report no scores; parser "none"
    // never fails to parse).
    expect(
      checkStepLines(run.stdout(), join(runDir, "air.db"), {
        absent: ["no-score", "parse-err"],
        present: ["turns/s"],
      }),
    ).toEqual([]);
    // One progress display: no info line repeats every step (policy counters, weight loads).
    expect(perStepLogLines(`${run.stdout()}${run.stderr()}`)).toEqual([]);
    expect(survivors(run, runDir)).toEqual([]);

    const outputs = documentedOutputs(CONFIG);
    expect(outputs.length).toBeGreaterThan(0);
    for (const { rel, cmd } of outputs)
      expect({ where: cmd.where, path: rel, exists: existsSync(join(runDir, rel)) }).toMatchObject({
        exists: true,
      });

    const evals = documentedCommands().filter((c) => c.argv[0] === "eval" && c.argv[1] === CONFIG);
    expect(evals.length).toBeGreaterThanOrEqual(2);
    for (const cmd of evals) {
      // The command's words, with each path into the documented run dir moved into the test's.
      const moved = new Map(
        commandPaths(cmd)
          .filter((p) => p.path.startsWith(`${documentedRunDir}/`))
          .map((p) => [p.word, resolve(runDir, p.path.slice(documentedRunDir.length + 1))]),
      );
      const args = cmd.argv.slice(1).map((w) => moved.get(w) ?? w);
      const r = await evalCommand([...args, `--run.output_dir=${out}`, ...serverArgs]);
      expect({ where: cmd.where, code: r.code, tail: r.code === 0 ? "" : r.output.slice(-2000) }).toEqual({
        where: cmd.where,
        code: 0,
        tail: "",
      });
      expect(r.output).toContain("evaluation completed");
    }
  }, 240_000);
});
