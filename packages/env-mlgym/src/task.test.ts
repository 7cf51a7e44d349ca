import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AirError } from "@air/core";
import YAML from "yaml";
import { loadTask } from "./task.ts";
import { REPO_ROOT } from "./testing/context.ts";

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A copy of the repo's MLGym root whose apartmentRent YAML is changed by `edit`. */
function rootWith(edit: (task: Record<string, unknown>) => void): string {
  const root = mkdtempSync(join(tmpdir(), "air-mlgym-yaml-"));
  roots.push(root);
  cpSync(join(REPO_ROOT, "configs", "tasks"), join(root, "configs", "tasks"), { recursive: true });
  cpSync(join(REPO_ROOT, "configs", "datasets"), join(root, "configs", "datasets"), { recursive: true });
  cpSync(join(REPO_ROOT, "data"), join(root, "data"), { recursive: true });
  const file = join(root, "configs", "tasks", "apartmentRent.yaml");
  const task = YAML.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  edit(task);
  writeFileSync(file, YAML.stringify(task));
  return root;
}

async function loadError(root: string): Promise<AirError> {
  try {
    await loadTask(root, "apartmentRent");
  } catch (error) {
    if (error instanceof AirError) return error;
    throw error;
  }
  throw new Error("loadTask did not fail");
}

describe("loadTask", () => {
  test("reads the project's CSV task with datasets, secrets and directions", async () => {
    const task = await loadTask(REPO_ROOT, "apartmentRent");
    expect(task.entrypoint).toBe("CSVSubmissionTasks");
    expect(task.description).toContain("APARTMENTRENT:\nSynthetic apartment listings");
    expect(task.description).not.toContain("{dataset_docs}");
    expect(task.priorityMetric).toBe("r2");
    expect(task.directions).toEqual({ r2: "maximize", rmse: "minimize" });
    expect(task.baselineScores.r2).toBeCloseTo(0.6384, 3);
    expect(task.secretFiles).toEqual([join(REPO_ROOT, "data/apartmentRent/answer.csv")]);
    expect(task.trainingTimeoutS).toBe(120);
  });

  test("reads the project's game task", async () => {
    const task = await loadTask(REPO_ROOT, "rpsTournament");
    expect(task.entrypoint).toBe("PythonSubmissionTasks");
    expect(task.priorityMetric).toBe("Score");
    expect(task.datasets).toEqual([]);
  });

  test("config overrides win over the YAML's directions", async () => {
    const task = await loadTask(REPO_ROOT, "apartmentRent", {
      directions: { r2: "minimize" },
      priorityMetric: "rmse",
    });
    expect(task.directions.r2).toBe("minimize");
    expect(task.priorityMetric).toBe("rmse");
  });

  test("a missing required field names the file and the field", async () => {
    const error = await loadError(rootWith((t) => delete t.description));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("apartmentRent.yaml");
    expect(error.message).toContain("description");
  });

  test("an unknown entrypoint is rejected with the known ones", async () => {
    const error = await loadError(rootWith((t) => (t.task_entrypoint = "MagicTasks")));
    expect(error.message).toContain("task_entrypoint");
    expect(error.message).toContain("CSVSubmissionTasks");
  });

  test("missing data is a clear error", async () => {
    const root = rootWith(() => {});
    rmSync(join(root, "data", "apartmentRent", "data"), { recursive: true });
    const error = await loadError(root);
    expect(error.message).toContain("data_path not found: data/apartmentRent/data");
  });

  test("a missing starter file and a missing dataset config are clear errors", async () => {
    const a = await loadError(rootWith((t) => (t.starter_code = ["data/apartmentRent/nope.py"])));
    expect(a.message).toContain("starter_code not found: data/apartmentRent/nope.py");
    const b = await loadError(rootWith((t) => (t.dataset_configs = ["datasets/nope.yaml"])));
    expect(b.message).toContain("dataset config not found: datasets/nope.yaml");
  });

  test("a YAML path may be relative to configs/ (MLGym's form) or to the root", async () => {
    expect((await loadTask(REPO_ROOT, "tasks/rpsTournament.yaml")).id).toBe("rpsTournament");
    expect((await loadTask(REPO_ROOT, "configs/tasks/rpsTournament.yaml")).id).toBe("rpsTournament");
    expect((await loadTask(REPO_ROOT, join(REPO_ROOT, "configs/tasks/rpsTournament.yaml"))).id).toBe(
      "rpsTournament",
    );
  });

  test("a task that does not exist names the path it looked at", async () => {
    await expect(loadTask(REPO_ROOT, "noSuchTask")).rejects.toThrow(
      /configs\/tasks\/noSuchTask.yaml: file not found/,
    );
  });
});

describe("score ranges", () => {
  test("the YAML's score_ranges, else the known games' payoff bounds, else none", async () => {
    const own = await loadTask(REPO_ROOT, "rpsTournament");
    expect(own.scoreRanges).toEqual({ Score: { min: -1, max: 1 } });
    const known = await loadTask(join(import.meta.dir, "..", "fixtures", "known-game"), "prisonersDilemma");
    expect(known.scoreRanges).toEqual({ Score: { min: 0, max: 5 } });
    expect((await loadTask(REPO_ROOT, "apartmentRent")).scoreRanges).toEqual({});
  });
});
