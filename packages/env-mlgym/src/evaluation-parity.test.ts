import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Environment } from "@air/core";
import { removeContainersByLabel } from "@air/sandbox";
import Docker from "dockerode";
import { decodeFailure } from "./evaluation.ts";
import { dockerAvailable, removeTestRunDirs } from "./testing/context.ts";
import { exampleOf, runScript } from "./testing/script.ts";
import { makeEnv } from "./testing/suite.ts";

// What the agent sees of an evaluation and of the task's files, against MLGym's own texts at 9d40c1b
// (mlgym/environment/tasks.py `EvaluationFormatError`, `PythonSubmissionTasks.evaluate`; env.py `_evaluate`'s
// validate line and the reset's `chmod 555` of the evaluation paths), on air's own task, both runtimes.

afterAll(removeTestRunDirs);
const docker = await dockerAvailable();

const WS = "/home/agent/workspace";
/** MLGym's message around an evaluation's output (tasks.py, every entrypoint). */
const MLGYM_DECODE_HEAD = "Failed to decode metrics from evaluation script. Output:\n---\n";
const MLGYM_DECODE_TAIL = "\n---\nPlease make sure the evaluation script prints the metrics in json format.";
/** MLGym's validate line for a Python-submission task: `f"{self.task_workspace}/target.py"`, whatever the agent wrote. */
const MLGYM_PYTHON_ARTEFACT = `Your code produced a valid submission artefact at ${WS}/target.py.\nBaseline Score: {'Score': -0.0018}\nEvaluation Score: {'Score': `;

/** A shell line writing `source` (no quotes in it) to strategy.py. */
const write = (source: string) => `printf '${source.replaceAll("\n", "\\n")}\\n' > strategy.py`;

function paritySuite(runtime: "local" | "docker", enabled: boolean): void {
  let env: Environment | undefined;
  const runName = `air-test-eval-parity-${runtime}-${process.pid}`;
  let runDir = "";
  afterAll(async () => {
    await env?.close?.();
    if (runtime === "docker" && enabled && runDir) await removeContainersByLabel(new Docker(), runDir);
  });
  const start = async () => {
    if (!env) {
      const made = await makeEnv(runtime, runName, { command_timeout_s: 30 });
      env = made.env;
      runDir = made.ctx.runDir;
    }
    return env;
  };

  test.skipIf(!enabled)(
    `${runtime}: read-only files are mode 555 (ls shows evaluate.py*), as MLGym's reset makes them`,
    async () => {
      const e = await start();
      const [ls, mode] = await runScript(e, await exampleOf(e, "rpsTournament"), [
        "ls",
        "stat -c '%A %n' evaluate.py strategy.py",
      ]);
      expect(ls?.observation).toStartWith("evaluate.py*\nstrategy.py\n(Current Step");
      expect(mode?.observation).toStartWith("-r-xr-xr-x evaluate.py\n-rw-");
    },
    120_000,
  );

  test.skipIf(!enabled)(
    `${runtime}: validate names target.py for a Python-submission task, as MLGym does`,
    async () => {
      const e = await start();
      const [, valid] = await runScript(e, await exampleOf(e, "rpsTournament"), [
        write("def row_strategy(history):\n    return 1"),
        "validate",
      ]);
      expect(valid?.observation).toStartWith(MLGYM_PYTHON_ARTEFACT);
    },
    120_000,
  );

  test.skipIf(!enabled)(
    `${runtime}: a failed evaluation reads as MLGym's, absolute paths, no frame of air's import guard, whole`,
    async () => {
      // A game evaluated under the guard (the fixture's evaluate.py imports strategy.py, which air proxies).
      const made = await makeEnv(runtime, `${runName}-game`, {
        mlgym_root: join(import.meta.dir, "..", "fixtures", "known-game"),
        tasks: ["prisonersDilemma"],
        command_timeout_s: 30,
      });
      try {
        const [, broken, , printed, , long] = await runScript(
          made.env,
          await exampleOf(made.env, "prisonersDilemma"),
          [
            write("def row_strategy(history):\n    return undefined_name"),
            "validate",
            write("def row_strategy(history):\n    print(len(history))\n    return 0"),
            "validate",
            write("def row_strategy(history):\n    raise ValueError(chr(120) * 6000)"),
            "validate",
          ],
        );
        const error = broken?.evaluationError ?? "";
        expect(error).toStartWith(MLGYM_DECODE_HEAD);
        expect(error).toEndWith(MLGYM_DECODE_TAIL);
        expect(error).toContain(
          `Traceback (most recent call last):\n  File "${WS}/evaluate.py", line 10, in <module>`,
        );
        expect(error).toContain("NameError: name 'undefined_name' is not defined");
        for (const guard of ['File "<string>"', "<frozen runpy>", "runpy.py"])
          expect(error).not.toContain(guard);
        expect(error).not.toMatch(/\n\n/);
        expect(broken?.observation).toStartWith(MLGYM_DECODE_HEAD);
        // What the strategy prints lands in MLGym's evaluation output and its metrics do not decode: no score here
        // either, and the prints are shown before the evaluator's own output (never parsed).
        expect(printed?.scores).toBeUndefined();
        expect(printed?.evaluationError).toBe(
          `${MLGYM_DECODE_HEAD}0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n{\n  "Score": 3.0\n}${MLGYM_DECODE_TAIL}`,
        );
        // a long failure comes back whole (MLGym shows the evaluation's whole output): its head too
        expect(long?.evaluationError).toStartWith(
          `${MLGYM_DECODE_HEAD}air: traceback of strategy.row_strategy() in the agent's process:\nxxxx`,
        );
        expect(long?.evaluationError).toContain(
          `Traceback (most recent call last):\n  File "${WS}/evaluate.py"`,
        );
        expect(long?.evaluationError).toContain("ValueError: xxxx");
      } finally {
        await made.env.close?.();
        if (runtime === "docker") await removeContainersByLabel(new Docker(), made.ctx.runDir);
      }
    },
    180_000,
  );
}

describe("evaluation and files as MLGym shows them", () => {
  test("MLGym's decode-failure message, byte for byte", () => {
    expect(decodeFailure("Traceback\nValueError: x")).toBe(
      `${MLGYM_DECODE_HEAD}Traceback\nValueError: x${MLGYM_DECODE_TAIL}`,
    );
  });
  paritySuite("local", true);
  paritySuite("docker", docker);
});
