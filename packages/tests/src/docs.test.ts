import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { REPO_ROOT } from "@air/launcher/testing";
import {
  type DocCommand,
  documentedCommands,
  documentedOutputs,
  problemsOf,
  validateArgv,
} from "./test-docs.ts";

/**
 * The commands in README.md, docs/*.md and the comments of configs/*.toml, read from the files at test time:
 * each names a real script, subcommand, benchmark and file; each `bun run rl|eval <config> …` passes
 * `rl validate` with its overrides; each output path names a config's run dir (the runs of those configs check
 * that the paths exist after them: docs-runs.test.ts, quickstart.test.ts).
 */
const commands = documentedCommands();

/** The benchmark names, from `bun run bench`'s usage line. */
function benchmarks(): string[] {
  const r = Bun.spawnSync(["bun", join(REPO_ROOT, "packages/bench/src/bin.ts")], { cwd: REPO_ROOT });
  const usage = /usage: bun run bench <([^>]+)>/.exec(r.stderr.toString());
  return usage ? usage[1]!.split("|") : [];
}

describe("documented commands and paths", () => {
  test("the docs are read: the quickstart, the dataset debug run and its evaluation of trained weights", () => {
    const texts = commands.map((c) => c.text);
    expect(texts).toContain("bun run rl configs/quickstart.toml");
    expect(texts).toContain("bun run rl configs/dataset/debug.toml");
    expect(texts.some((t) => /^bun run eval configs\/dataset\/debug.toml .*--eval.weights/.test(t))).toBe(
      true,
    );
    expect(documentedOutputs("configs/dataset/debug.toml").length).toBeGreaterThan(0);
    expect(documentedOutputs("configs/quickstart.toml").length).toBeGreaterThan(0);
  });

  test("each names a script, subcommand, benchmark and file that exist; output paths lie in a config's run dir", () => {
    const known = benchmarks();
    expect(known.length).toBeGreaterThan(0);
    expect(commands.flatMap((c) => problemsOf(c, known))).toEqual([]);
  }, 30_000);

  test("the check fails on a wrong path, script, subcommand or output dir (the docs broken on purpose)", () => {
    const broken = (text: string): DocCommand => ({
      where: "README.md:1",
      text,
      argv: text.split(" ").slice(2),
      program: "bun run",
    });
    const known = ["tree"];
    expect(problemsOf(broken("bun run rl configs/dataset/debugg.toml"), known)).toHaveLength(1);
    expect(problemsOf(broken("bun run viz outputs/quickstrat"), known)[0]).toContain(
      "no config's run writes it",
    );
    expect(problemsOf(broken("bun run rll configs/quickstart.toml"), known)[0]).toContain('no script "rll"');
    expect(problemsOf(broken("bun run rl verify configs/quickstart.toml"), known)[0]).toContain(
      "no subcommand",
    );
    expect(problemsOf(broken("bun run bench tre"), known)[0]).toContain('no benchmark "tre"');
    // the 0.8 layout the debug config's comment once named
    const old = broken(
      "bun run eval configs/dataset/debug.toml --eval.weights ../../outputs/dataset-debug/prime-rl/run_default/broadcasts/step_6",
    );
    expect(problemsOf(old, known)).toEqual([]); // an output: checked after the run (docs-runs.test.ts), not here
    expect(problemsOf(broken("bun run viz outputs/quickstart"), known)).toEqual([]);
  });

  test("each `bun run rl|eval <config> …` passes rl validate with its overrides", () => {
    const runs = new Map<string, DocCommand>();
    for (const c of commands) {
      const argv = validateArgv(c);
      if (argv) runs.set(argv.join(" "), c);
    }
    expect(runs.size).toBeGreaterThan(5);
    const failed: string[] = [];
    for (const [argv, c] of runs) {
      const r = Bun.spawnSync(
        ["bun", join(REPO_ROOT, "packages/launcher/src/bin/rl.ts"), ...argv.split(" ")],
        {
          cwd: REPO_ROOT,
        },
      );
      if (r.exitCode !== 0)
        failed.push(`${c.where}: ${c.text}: rl ${argv} exited ${r.exitCode}: ${r.stderr}`);
    }
    expect(failed).toEqual([]);
  }, 120_000);
});
