import { afterAll, describe, expect, test } from "bun:test";
import { AirError } from "@air/core";
import { AIR_TRAINING_COMMAND, MLGYM_TRAINING_COMMAND } from "./command-timeouts.ts";
import plugin, { createMlgymEnvironment, mlgymConfigSchema } from "./index.ts";
import { removeTestRunDirs, testContext } from "./testing/context.ts";

afterAll(removeTestRunDirs);

describe("mlgym plugin", () => {
  test("is an env plugin named mlgym whose schema fills MLGym's container defaults", () => {
    expect(plugin).toMatchObject({ name: "mlgym", kind: "env" });
    const config = plugin.configSchema.parse({ tasks: ["apartmentRent"] });
    expect(config.runtime).toBe("docker");
    expect(config.docker).toMatchObject({
      image: "aigym/mlgym-agent:latest",
      user: "agent",
      workspace: "/home/agent/workspace",
      network: "none",
    });
    expect(plugin.configSchema.safeParse({ tasks: [] }).success).toBe(false);
    expect(plugin.configSchema.safeParse({ tasks: ["x"], typo: 1 }).success).toBe(false);
  });

  test("training commands (long timeout) are told apart from ordinary ones", () => {
    const training = new RegExp(AIR_TRAINING_COMMAND);
    for (const c of [
      "python train.py",
      "cd src && python3 -u train.py --epochs 3",
      "torchrun --nproc_per_node=2 t.py",
      "bash run.sh",
    ]) {
      expect(training.test(c)).toBe(true);
    }
    for (const c of ["ls -la", "cat train.py", "pip list", "echo python", "grep python3 x.txt"]) {
      expect(training.test(c)).toBe(false);
    }
  });

  test("with aci mlgym, MLGym's rule: the command contains torchrun/python/accelerate/deepspeed anywhere", () => {
    const training = new RegExp(MLGYM_TRAINING_COMMAND);
    for (const c of ["python train.py", "echo python", "cat python_notes.txt", "deepspeed t.py"]) {
      expect(training.test(c)).toBe(true);
    }
    for (const c of ["ls -la", "bash run.sh", "cat train.py"]) expect(training.test(c)).toBe(false);
  });

  test("examples: one per task and index, with the score spec rewards need", async () => {
    const config = mlgymConfigSchema.parse({
      tasks: ["apartmentRent", "rpsTournament"],
      eval_tasks: ["rpsTournament"],
      num_examples_per_task: 2,
      runtime: "local",
    });
    const env = await createMlgymEnvironment(config, testContext("examples"));
    try {
      const train = await env.examples("train");
      expect(train.map((e) => e.id)).toEqual([
        "apartmentRent#0",
        "apartmentRent#1",
        "rpsTournament#0",
        "rpsTournament#1",
      ]);
      expect(train[0]?.score).toEqual({
        priorityMetric: "r2",
        directions: { r2: "maximize", rmse: "minimize" },
        baseline: { r2: 0.6384379474104775, rmse: 248.82674457793664 },
        ranges: {},
      });
      expect(train[2]?.score?.ranges).toEqual({ Score: { min: -1, max: 1 } });
      expect((await env.examples("eval")).map((e) => e.task)).toEqual(["rpsTournament", "rpsTournament"]);
    } finally {
      await env.close?.();
    }
  });

  test("a bad task fails at create time with the YAML's path", async () => {
    const config = mlgymConfigSchema.parse({ tasks: ["apartmentRent", "missingTask"], runtime: "local" });
    const error = await createMlgymEnvironment(config, testContext("bad")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AirError);
    expect((error as AirError).message).toContain("configs/tasks/missingTask.yaml: file not found");
  });

  test("sandbox state events reach the run's bus", async () => {
    const ctx = testContext("events");
    const env = await createMlgymEnvironment(
      mlgymConfigSchema.parse({ tasks: ["rpsTournament"], runtime: "local" }),
      ctx,
    );
    const [example] = await env.examples("train");
    const session = await env.open(example as NonNullable<typeof example>, {
      rolloutId: "ev",
      signal: new AbortController().signal,
    });
    await session.close();
    await env.close?.();
    expect(ctx.events.map((e) => e.state)).toEqual(["ready", "removed"]);
    expect(ctx.events[0]?.rolloutId).toBe("ev");
  });
});
