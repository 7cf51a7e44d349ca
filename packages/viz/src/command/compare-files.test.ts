import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compareSummaries } from "@air/eval";
import { taskFigures, writeReport } from "@air/eval/testing";
import { createApp } from "../app.ts";
import { readComparison } from "./compare-files.ts";
import { resolveStore } from "./store-target.ts";

const dir = mkdtempSync(join(tmpdir(), "air-viz-compare-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("readComparison: the reports' performance profiles and AUP, as eval compare computes them", () => {
  const a = writeReport(join(dir, "a.json"), "step-0", [
    taskFigures("t1", 10, 10),
    taskFigures("t2", 0.5, 0.5),
  ]);
  const b = writeReport(join(dir, "b.json"), "step-50", [taskFigures("t1", 1, 1), taskFigures("t2", 2, 2)]);
  const view = readComparison([a, b]);
  expect(view.methods).toEqual(["step-0", "step-50"]);
  expect(view.profiles.map((p) => p.title)).toEqual([
    "Performance profile: best attempt",
    "Performance profile: last submission",
  ]);
  const expected = compareSummaries([
    { name: "step-0", summary: JSON.parse(readFileSync(a, "utf8")) },
    { name: "step-50", summary: JSON.parse(readFileSync(b, "utf8")) },
  ]);
  expect(view.profiles[0]!.aup).toEqual(expected.best!.aup);
  const names = Object.keys(view.profiles[0]!.points);
  expect(names).toEqual([
    `step-0 · AUP ${expected.best!.aup["step-0"]!.toFixed(3)}`,
    `step-50 · AUP ${expected.best!.aup["step-50"]!.toFixed(3)}`,
    `baseline · AUP ${expected.best!.aup.baseline!.toFixed(3)}`,
  ]);
  const line = view.profiles[0]!.points[names[0]!]!;
  expect(line[0]![0]).toBe(0);
  expect(line.every(([, y]) => y >= 0 && y <= 1)).toBe(true);
  expect(readComparison([a, b], ["x", "y"]).methods).toEqual(["x", "y"]);
});

test("readComparison: a file that is not a report, or names that do not match, fail clearly", () => {
  const bad = join(dir, "bad.json");
  writeFileSync(bad, JSON.stringify({ hello: 1 }));
  expect(() => readComparison([bad])).toThrow(/bad.json is not an eval report/);
  expect(() => readComparison([join(dir, "missing.json")])).toThrow(/missing.json/);
  expect(() => readComparison([bad], ["x", "y"])).toThrow(/--names has 2 names for 1/);
});

test("/eval-compare serves the profile charts; without a comparison it says how to get one", async () => {
  const a = writeReport(join(dir, "c.json"), "p", [taskFigures("t1", 3, 2)]);
  const { dbPath } = resolveStore(undefined);
  const app = createApp(dbPath, { comparison: readComparison([a]) });
  const bare = createApp(dbPath);
  try {
    const page = await (await app.request("/eval-compare")).text();
    expect(page.match(/<figure class="chart"/g)).toHaveLength(2);
    expect(page).toContain('data-stepped="1"');
    expect(page).toContain("AUP");
    expect(await (await app.request("/")).text()).toContain('href="/eval-compare"');
    expect(await (await bare.request("/eval-compare")).text()).toContain("--compare a.json,b.json");
  } finally {
    app.close();
    bare.close();
  }
});
