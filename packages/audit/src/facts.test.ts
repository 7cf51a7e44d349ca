import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { loadTask, namedFiles } from "@air/env-mlgym";
import { importedModules, taskFacts } from "./facts.ts";

const FIXTURES = resolve(import.meta.dir, "../fixtures/mlgym");
const REPO = resolve(import.meta.dir, "../../..");

describe("task facts", () => {
  test("file names in string literals, imported modules", () => {
    expect(
      namedFiles(`open("data/answers.csv"); p = os.path.join(d, 'ground_truth.csv'); x = "a b.csv"`),
    ).toEqual(["data/answers.csv", "ground_truth.csv"]);
    expect(
      importedModules("import json\nfrom scoring import accuracy\n  import target\nx = 'import no'"),
    ).toEqual(["json", "scoring", "target"]);
  });

  test("leakyCsv: undeclared answers named by the evaluator are ground truth; the imported helper is not restored", async () => {
    const facts = taskFacts(await loadTask(FIXTURES, "leakyCsv"), "/home/agent/workspace");
    expect(facts.groundTruth.map((g) => [g.path, g.why])).toEqual([
      ["data/answers.csv", "named in evaluate.py"],
    ]);
    expect(facts.evaluationFiles).toEqual([
      { path: "evaluate.py", restored: true },
      { path: "scoring.py", restored: false },
    ]);
    expect(facts.baselineCommands).toEqual(["python baseline.py"]);
    expect(facts.copyCandidates).toEqual(["data/answers.csv", "data/test.csv", "data/train.csv"]);
    expect(facts.sampleSubmission).toMatch(/^id,y\r?\n/);
    expect(facts.declaredDirections).toEqual({});
  });

  test("leakyGame: the strategy is the agent's module, the restored opponent is not; the baseline is the starter code", async () => {
    const facts = taskFacts(await loadTask(FIXTURES, "leakyGame"), "/w");
    expect(facts.agentModules).toEqual(["strategy.py"]);
    expect(facts.evaluationFiles).toEqual([{ path: "evaluate.py", restored: true }]);
    expect(facts.baselineCommands).toEqual([]);
    expect(facts.baselineRunnable).toBe(true);
  });

  test("apartmentRent: the declared secret answer is ground truth where the evaluation sees it", async () => {
    const facts = taskFacts(await loadTask(REPO, "apartmentRent"), "/w");
    expect(facts.groundTruth.map((g) => [g.path, g.why])).toEqual([["answer.csv", "secret file"]]);
    expect(facts.copyCandidates).not.toContain("answer.csv");
    expect(facts.declaredDirections).toEqual({ r2: "maximize", rmse: "minimize" });
  });
});
