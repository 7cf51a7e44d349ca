/**
 * The `viz` command's eval comparison (`--compare a.json,b.json`): reads `eval` report files and computes the
 * performance profiles and AUP with `@air/eval`; the dashboard only draws the resulting `ComparisonView`.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import {
  type Comparison,
  compareSummaries,
  type EvaluationSummary,
  type PerformanceProfile,
} from "@air/eval";
import type { ComparisonView, ProfileChart } from "../compare.ts";
import type { Point } from "../derived.ts";

function isSummary(x: unknown): x is EvaluationSummary & { label?: string } {
  if (!x || typeof x !== "object") return false;
  const r = x as Record<string, unknown>;
  return Array.isArray(r.tasks) && !!r.overall && typeof r.overall === "object";
}

/**
 * Reads `eval` report files (what `eval compare` reads) and compares them: method names from `names`, else
 * each report's label, else the file name. Throws naming the file that is not a report.
 * @example readComparison(["step-0.json", "step-50.json"]).profiles[0]?.aup
 */
export function readComparison(files: string[], names?: string[]): ComparisonView {
  if (names && names.length !== files.length)
    throw new Error(`--names has ${names.length} names for ${files.length} report files`);
  const named = files.map((file, i) => {
    let report: unknown;
    try {
      report = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!isSummary(report)) throw new Error(`${file} is not an eval report (no tasks and overall figures)`);
    return { name: names?.[i] ?? report.label ?? basename(file, ".json"), summary: report };
  });
  return comparisonView(compareSummaries(named));
}

/** `profile` as chart lines: x = τ (log10 of the performance ratio), y = ρ(τ), legend "name · AUP x". */
export function profileChart(title: string, profile: PerformanceProfile): ProfileChart {
  const points: Record<string, Point[]> = {};
  for (const [method, rho] of Object.entries(profile.profiles)) {
    const label = `${method} · AUP ${profile.aup[method]!.toFixed(3)}`;
    points[label] = profile.tau.map((t, i): Point => [t, rho[i]!]);
  }
  return { title, points, aup: profile.aup };
}

/**
 * The dashboard's view of a `compareSummaries` result.
 * @example comparisonView(compareSummaries(named)).profiles.map((p) => p.title)
 */
export function comparisonView(c: Comparison): ComparisonView {
  const profiles: ProfileChart[] = [];
  if (c.best) profiles.push(profileChart("Performance profile: best attempt", c.best));
  if (c.last) profiles.push(profileChart("Performance profile: last submission", c.last));
  return { methods: c.methods, table: c.table, profiles };
}
