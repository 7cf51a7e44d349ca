import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { makeTurn } from "@air/core/testing";
import { loadTask } from "@air/env-mlgym";
import { baselineFindings, meanStd, metricFindings } from "./analysis.ts";
import { taskFacts } from "./facts.ts";
import { formatTable } from "./report.ts";
import { FORGED } from "./shell.ts";
import type { ProbeRun } from "./types.ts";

const REPO = resolve(import.meta.dir, "../../..");
const run = (scores?: Record<string, number>): ProbeRun => ({
  turns: [{ ...makeTurn({ index: 0 }), scores }],
});

describe("analysis", () => {
  test("mean and sample std", () => {
    expect(meanStd([1, 3])).toEqual({ mean: 2, std: Math.SQRT2 });
    expect(meanStd([5])).toEqual({ mean: 5, std: 0 });
  });

  test("baseline: reproduced and deterministic, or off and varying", async () => {
    const facts = taskFacts(await loadTask(REPO, "apartmentRent"), "/w");
    const good = baselineFindings(facts, [run({ r2: 0.6384 }), run({ r2: 0.6384 })]);
    expect(good.map((f) => f.verdict)).toEqual(["ok", "ok"]);
    const bad = baselineFindings(facts, [run({ r2: 0.5 }), run({ r2: 0.52 })]);
    expect(bad.map((f) => f.verdict)).toEqual(["warn", "warn"]);
    expect(bad[0]?.evidence).toMatch(/not reproduced/);
    expect(bad.some((f) => f.critical)).toBe(false);
  });

  test("metric sanity: an impossible score is critical, a forged one is left to its probe", async () => {
    const facts = taskFacts(await loadTask(REPO, "apartmentRent"), "/w");
    const base = [run({ r2: 0.63, rmse: 250 })];
    const clean = metricFindings(facts, base, [...base, run({ r2: FORGED, rmse: FORGED })]);
    expect(clean.find((f) => f.probe === "score range")?.verdict).toBe("ok");
    const broken = metricFindings(facts, base, [...base, run({ r2: 1.4, rmse: 3 })]);
    const range = broken.find((f) => f.probe === "score range");
    expect(range?.critical).toBe(true);
    expect(range?.evidence).toMatch(/r2 = 1.4 is impossible/);
    const table = formatTable({
      findings: broken.map((f) => ({ ...f, task: "apartmentRent" })),
      critical: 1,
      tasks: ["apartmentRent"],
      repeats: 1,
      runtime: "local (bwrap)",
    });
    expect(table).toMatch(/^!! +apartmentRent +metric +score range +FLAGGED/m);
    expect(table).toMatch(/apartmentRent: 1 critical/);
  });
});
