import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "@air/sandbox";
import { mlgymConfigSchema } from "./config.ts";
import { evaluateTask, parseMetrics } from "./evaluation.ts";
import { createMlgymEnvironment } from "./plugin.ts";
import { loadTask, type Task } from "./task.ts";
import { REPO_ROOT, removeTestRunDirs, testContext } from "./testing/context.ts";
import { exampleOf, runScript } from "./testing/script.ts";

afterAll(removeTestRunDirs);

describe("parseMetrics", () => {
  test("takes the last JSON object line and keeps numeric values", () => {
    expect(parseMetrics('warming up\n{"a": 1}\n{"Score": 0.5, "name": "x"}\n')).toEqual({ Score: 0.5 });
    expect(parseMetrics("no json here")).toBeUndefined();
    expect(parseMetrics('{"broken": \n')).toBeUndefined();
    expect(parseMetrics('{"name": "only text"}')).toBeUndefined();
  });

  test("reads the whole stdout as one JSON object first (MLGym's way: multi-line JSON)", () => {
    expect(parseMetrics('{\n  "Score": 2.5\n}\n')).toEqual({ Score: 2.5 });
    expect(parseMetrics('noise\n{\n  "Score": 2.5\n}\n')).toBeUndefined();
  });
});

describe("ModelSubmissionTasks", () => {
  test("evaluates the first *.yaml in the workspace with --config_fname", async () => {
    const config = mlgymConfigSchema.parse({
      mlgym_root: join(import.meta.dir, "..", "fixtures", "model-task"),
      tasks: ["modelTask"],
      runtime: "local",
    });
    const env = await createMlgymEnvironment(config, testContext("model-task"));
    try {
      const results = await runScript(env, await exampleOf(env, "modelTask"), [
        "validate",
        "python train.py 0.75",
        "validate",
      ]);
      expect(results[0]?.evaluationError).toContain("No valid submission artefacts found");
      expect(results[2]?.scores).toEqual({ accuracy: 0.75 });
      expect(results[2]?.observation).toContain("checkpoints/config.yaml");
    } finally {
      await env.close?.();
    }
  });
});

describe("known MLGym task defaults", () => {
  test("a known game's opponent is in the workspace, but the evaluation imports its pristine copy", async () => {
    const config = mlgymConfigSchema.parse({
      mlgym_root: join(import.meta.dir, "..", "fixtures", "known-game"),
      tasks: ["prisonersDilemma"],
      runtime: "local",
    });
    const env = await createMlgymEnvironment(config, testContext("known-game"));
    try {
      const results = await runScript(env, await exampleOf(env, "prisonersDilemma"), [
        "ls",
        "validate",
        "printf 'def target_column_strategy(history):\\n    return 1\\n' > target.py; cat target.py",
        "validate",
      ]);
      expect(results[0]?.observation).toStartWith("evaluate.py\nstrategy.py\ntarget.py\n(Current Step");
      expect(results[1]?.scores).toEqual({ Score: 3 });
      expect(results[2]?.observation).toStartWith("def target_column_strategy(history):\n    return 1\n");
      expect(results[3]?.scores).toEqual({ Score: 3 });
    } finally {
      await env.close?.();
    }
  });
});

/**
 * An LM task on a sandbox whose evaluation is bash in a temporary `dir` with `dir/bin` (holding `bin`'s scripts)
 * first on PATH; the agent's shell must not be used. `run` gets them; the directory goes afterwards.
 */
async function withLmSandbox(
  bin: Record<string, string>,
  run: (sandbox: Sandbox, task: Task, dir: string) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "air-lm-eval-"));
  mkdirSync(join(dir, "bin"));
  for (const [name, text] of Object.entries(bin))
    writeFileSync(join(dir, "bin", name), `#!/bin/sh\n${text}\n`, { mode: 0o755 });
  const sandbox: Sandbox = {
    id: "fake",
    workspace: "/home/agent/workspace",
    exec: async () => {
      throw new Error("the evaluation's checks ran in the agent's shell");
    },
    evaluate: async (request) => {
      const proc = Bun.spawnSync(["bash", "-c", request.command], {
        cwd: dir,
        env: { PATH: `${dir}/bin:/usr/bin:/bin` },
      });
      return {
        stdout: proc.stdout.toString(),
        stderr: proc.stderr.toString(),
        exitCode: proc.exitCode ?? 1,
        timedOut: false,
      };
    },
    snapshot: async () => new Uint8Array(),
    alive: async () => true,
  };
  const task: Task = { ...(await loadTask(REPO_ROOT, "apartmentRent")), entrypoint: "LMSubmissionTasks" };
  try {
    await run(sandbox, task, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("LMSubmissionTasks", () => {
  test("without a GPU in the sandbox the evaluation is a clear error, and torchrun never runs", async () => {
    // The evaluation's own shell decides (here: bash in a directory whose PATH has a torchrun that leaves a mark
    // and no nvidia-smi), never the agent's shell.
    await withLmSandbox({ torchrun: 'touch "$(dirname "$0")/../ran"' }, async (sandbox, task, dir) => {
      const result = await evaluateTask(sandbox, task, { python: "python", timeoutMs: 1000 });
      expect(result).toEqual({
        ok: false,
        error: expect.stringContaining("torchrun on a GPU, and the sandbox sees none"),
      });
      expect(existsSync(join(dir, "ran"))).toBe(false);
    });
  });

  test("with a GPU, torchrun's metrics are the score and the artefact path is MLGym's empty one", async () => {
    const bin = { "nvidia-smi": "echo 'GPU 0: H200 (UUID: GPU-0)'", torchrun: `echo '{"val_loss": 3.25}'` };
    await withLmSandbox(bin, async (sandbox, task) => {
      const result = await evaluateTask(sandbox, task, { python: "python", timeoutMs: 1000 });
      expect(result).toMatchObject({ ok: true, artefact: "" });
    });
  });
});
