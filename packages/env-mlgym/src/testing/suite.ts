import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Environment } from "@air/core";
import { mlgymConfigSchema } from "../config.ts";
import { createMlgymEnvironment } from "../plugin.ts";
import { TEST_IMAGE, testContext } from "./context.ts";
import { exampleOf, runScript } from "./script.ts";

export const COUNTER_STRATEGY = [
  "edit 10:12",
  "def row_strategy(history):",
  "    if not history:",
  "        return 1",
  "    return (history[-1][0] + 2) % 3",
  "end_of_edit",
].join("\n");

/** Builds an mlgym env for tests on `runtime` (docker uses the local test image). */
export async function makeEnv(
  runtime: "docker" | "local",
  runName: string,
  extra: Record<string, unknown> = {},
) {
  const ctx = testContext(runName);
  const config = mlgymConfigSchema.parse({
    tasks: ["apartmentRent", "rpsTournament"],
    runtime,
    max_steps: 20,
    command_timeout_s: 2,
    docker: { image: TEST_IMAGE, pool_size: 2, memory_mb: 2048, cpus: 1 },
    ...extra,
  });
  return { env: await createMlgymEnvironment(config, ctx), ctx };
}

/**
 * The behaviour both runtimes must share: the project tasks end to end with scripted commands, validate and
 * submit, auto-submit, the editor, the blocklist, timeouts, and the honest-evaluation guarantees.
 */
export function sharedSuite(runtime: "docker" | "local", enabled: boolean): void {
  let env: Environment;
  const run = `air-test-${runtime}-${process.pid}`;
  beforeAll(async () => {
    if (enabled) env = (await makeEnv(runtime, run)).env;
  });
  afterAll(async () => {
    await env?.close?.();
  });
  const it = (name: string, fn: () => Promise<void>, timeoutMs = 60_000) =>
    test.skipIf(!enabled)(name, fn, timeoutMs);

  it("apartmentRent end to end: baseline matches the YAML, forest beats it, mean loses, submit ends", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const results = await runScript(env, example, [
      "ls",
      "cat README.md",
      "validate",
      "python train.py",
      "validate",
      "python train.py --model forest",
      "validate",
      "python train.py --model mean",
      "submit",
      "ls",
    ]);
    expect(results).toHaveLength(9);
    expect(results[0]?.observation).toStartWith(
      "README.md\ndata/\nevaluate.py*\ntrain.py\n(Current Step: 1, Remaining Steps: 19)",
    );
    expect(results[2]).toMatchObject({ kind: "validate", done: false });
    expect(results[2]?.evaluationError).toContain("No submission file found");
    const [baseline, forest, mean] = [results[4]?.scores, results[6]?.scores, results[8]?.scores];
    const yaml = example.score?.baseline ?? {};
    expect(baseline?.r2).toBeCloseTo(yaml.r2 as number, 6);
    expect(baseline?.rmse).toBeCloseTo(yaml.rmse as number, 4);
    expect(results[4]?.observation).toContain("Baseline Score:");
    expect(forest?.r2).toBeGreaterThan((yaml.r2 as number) + 0.2);
    expect(mean?.r2).toBeLessThan(0.01);
    expect(results[8]).toMatchObject({ kind: "submit", done: true });
  });

  it("rpsTournament end to end: baseline matches the YAML, an edited strategy scores higher", async () => {
    const example = await exampleOf(env, "rpsTournament");
    const results = await runScript(env, example, [
      "validate",
      "open strategy.py",
      COUNTER_STRATEGY,
      "validate",
      "submit",
    ]);
    expect(results[0]?.scores?.Score).toBeCloseTo(example.score?.baseline?.Score as number, 6);
    expect(results[2]?.observation).toContain("File updated.");
    expect(results[2]?.observation).toContain("13:    return (history[-1][0] + 2) % 3");
    expect(results[3]?.scores?.Score).toBeGreaterThan(0.1);
    expect(results[4]).toMatchObject({ kind: "submit", done: true });
  });

  it("running out of steps auto-submits the current artefact", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const session = await env.open(example, { rolloutId: "auto", signal: new AbortController().signal });
    try {
      await session.step({ text: "", command: "python train.py --model mean" });
      const result = await session.finish?.();
      expect(result).toMatchObject({ kind: "auto_submit", done: true });
      expect(result?.scores?.r2).toBeLessThan(0.01);
    } finally {
      await session.close();
    }
  });

  it("editor: create, insert, search, a syntax-breaking edit is reverted", async () => {
    const example = await exampleOf(env, "rpsTournament");
    const results = await runScript(env, example, [
      "create notes.py",
      "insert 0\ndef f(x):\n    return x + 1\nend_of_insert",
      "edit 2:2\n    return (x +\nend_of_edit",
      "cat notes.py",
      "search_dir row_strategy",
      "find_file '*.py'",
      "search_file return notes.py",
      "goto 1",
      "open missing.py",
      "head -c 2000000 /dev/zero | tr '\\0' 'x' > big.txt; open big.txt",
      "open big.txt",
    ]);
    expect(results[0]?.observation).toContain("notes.py (1 lines total)]\n1:\n");
    expect(results[1]?.observation).toContain("1:def f(x):\n2:    return x + 1");
    expect(results[2]?.observation).toContain("Your proposed edit has introduced new syntax error(s)");
    expect(results[3]?.observation).toStartWith("def f(x):\n    return x + 1\n(Current Step");
    expect(results[4]?.observation).toContain("strategy.py (");
    expect(results[5]?.observation).toContain("notes.py");
    expect(results[6]?.observation).toContain("Line 2:    return x + 1");
    expect(results[7]?.observation).toContain("1:def f(x):");
    expect(results[8]?.observation).toStartWith("File missing.py not found");
    expect(results[9]?.observation).toStartWith(
      "open: run it as a command on its own, not inside a shell line",
    );
    expect(results[10]?.observation).toMatch(/^Error: \S+\/big\.txt is larger than 1000000 bytes; use head/);
  });

  it("blocked and unparsable commands are answered without running anything", async () => {
    const example = await exampleOf(env, "rpsTournament");
    const session = await env.open(example, { rolloutId: "blocked", signal: new AbortController().signal });
    try {
      const vim = await session.step({ text: "", command: "vim strategy.py" });
      expect(vim.observation).toStartWith("Operation 'vim' is not supported");
      const bare = await session.step({ text: "", command: "python" });
      expect(bare.observation).toStartWith("Operation 'python' is not supported");
      const noted = await session.step({
        text: "",
        command: "echo one",
        notes: ["several commands found, ran the first"],
      });
      expect(noted.observation).toStartWith("NOTE: several commands found, ran the first\none\n");
      const bad = await session.step({ text: "hmm", parseError: "no code block found" });
      expect(bad.observation).toStartWith("Your output was not formatted correctly: no code block found.");
      expect(bad.observation).toContain("(Current Step: 4, Remaining Steps: 16)");
    } finally {
      await session.close();
    }
  });

  it("unclosed quotes and heredocs end with bash's message at once, not at the timeout", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const results = await runScript(env, example, [`echo "unterminated`, "cat <<EOF\nno end", "echo fine"]);
    expect(results[0]?.observation).toContain("unexpected EOF");
    expect(results[0]?.toolError).toBe("exit code 2");
    expect(results[1]?.observation).toContain("here-document");
    expect(results[1]?.observation).toContain("\nno end\n");
    expect(results[1]?.toolError).toBeUndefined();
    expect(results[2]?.observation).toStartWith("fine\n");
  });

  it("a command that sleeps forever is cut at its timeout; the shell keeps its directory", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const results = await runScript(env, example, ["cd data", "sleep 100000", "pwd; echo alive"]);
    expect(results[1]?.toolError).toContain("timed out after 2 s");
    expect(results[2]?.observation).toMatch(/\/data\nalive\n/);
  });

  it("a shell that exits is replaced in the same directory", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const results = await runScript(env, example, ["cd data", "exit 3", "pwd"]);
    expect(results[1]?.observation).toMatch(/^The shell exited; a new shell was started in \S+\/data\./);
    expect(results[2]?.observation).toMatch(/^\S+\/workspace\/data\n/);
  });

  it("long output is never cut by default (as in MLGym)", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const [cat, tail] = await runScript(env, example, ["cat data/train.csv", "tail -n 1 data/train.csv"]);
    const body = cat?.observation.split("\n(Current Step:")[0] ?? "";
    expect(body.length).toBeGreaterThan(6500);
    expect(body).toStartWith("id,area_m2,rooms");
    expect(body).toEndWith(tail?.observation.split("\n(Current Step:")[0] ?? "?");
  });

  it("the agent cannot read the ground truth or hidden opponents", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const commands = ["ls -R . ; cat answer.csv data/answer.csv"];
    if (runtime === "docker")
      commands.push("find / -name answer.csv -o -name opponents.py 2>/dev/null; echo end");
    const results = await runScript(env, example, commands);
    expect(results[0]?.observation).not.toContain("answer.csv\n");
    expect(results[0]?.observation).toContain("No such file or directory");
    if (runtime === "docker") expect(results[1]?.observation).toStartWith("end\n");
  });

  it("editing or symlinking evaluate.py does not change the score", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const fake = `import json; print(json.dumps({'r2': 99.0, 'rmse': 0.0}))`;
    const results = await runScript(env, example, [
      "python train.py",
      `chmod u+w evaluate.py; echo "${fake}" > evaluate.py; cat evaluate.py`,
      "validate",
      `rm -f evaluate.py; echo "${fake}" > /tmp/fake.py; ln -s /tmp/fake.py evaluate.py; ls -l evaluate.py`,
      "validate",
    ]);
    expect(results[2]?.scores?.r2).toBeCloseTo(example.score?.baseline?.r2 as number, 6);
    // docker: the agent may replace the root-owned file in its own directory; local: it is a read-only mount
    // of the task's pristine copy, which nobody inside can remove or replace
    expect(results[3]?.observation).toMatch(/evaluate\.py -> \/tmp\/fake\.py|Device or resource busy/);
    expect(results[4]?.scores?.r2).toBeCloseTo(example.score?.baseline?.r2 as number, 6);
  });

  it("a symlinked or doctored submission cannot reach the ground truth", async () => {
    const example = await exampleOf(env, "apartmentRent");
    // Were symlinks kept, submission.csv would point at the pristine answer.csv laid over the copy; the copy has
    // none, so there is no submission.
    const results = await runScript(env, example, [
      "echo id,rent > answer.csv; ln -s answer.csv submission.csv",
      "validate",
    ]);
    expect(results[1]?.scores).toBeUndefined();
    expect(results[1]?.evaluationError).toContain("No submission file found");
  });

  it("a rollout cannot break the next rollout's workspace", async () => {
    const example = await exampleOf(env, "apartmentRent");
    await runScript(env, example, [
      "rm -f train.py README.md; echo junk > junk.txt; mkdir -p ~/.local/lib; (sleep 100000 &) ; cd /tmp && echo x > left.txt",
    ]);
    const results = await runScript(env, example, [
      "ls",
      'pgrep -u "$(id -un)" -x sleep || echo no-sleep',
      "python train.py",
      "validate",
    ]);
    expect(results[0]?.observation).toStartWith("README.md\ndata/\nevaluate.py*\ntrain.py\n(Current Step");
    if (runtime === "docker") expect(results[1]?.observation).toStartWith("no-sleep");
    expect(results[3]?.scores?.r2).toBeCloseTo(example.score?.baseline?.r2 as number, 6);
  });
}
