import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadConfig, PluginRegistry } from "@air/core";
import { mlgymPlugin } from "@air/env-mlgym";
import { openStore, readLatestAudits } from "@air/logger-sqlite";
import { readEvaluationNoise } from "@air/logger-sqlite/read";
import { scriptedPolicyPlugin } from "@air/policy-scripted";
import { deltaReward } from "@air/reward-delta";
import { AUDIT_CONFIG_DEFAULTS, auditConfig } from "./run.ts";
import type { AuditReport, Finding } from "./types.ts";

setDefaultTimeout(240_000);

const FIXTURES = resolve(import.meta.dir, "../fixtures");
const out = mkdtempSync(join(tmpdir(), "air-audit-test-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** A registry with every plugin the fixture configs name (also the sections the audit never starts). */
async function registry(): Promise<PluginRegistry> {
  const { default: grpo } = await import("@air/advantage-grpo");
  const { branching } = await import("@air/strategies");
  const { default: none } = await import("@air/trainer-none");
  const r = new PluginRegistry({});
  for (const p of [mlgymPlugin, scriptedPolicyPlugin, deltaReward, grpo, branching, none]) r.register(p);
  return r;
}

async function audit(file: string, repeats = 2): Promise<AuditReport> {
  const config = await loadConfig(join(FIXTURES, file), {
    registry: await registry(),
    defaults: AUDIT_CONFIG_DEFAULTS,
    overrides: { run: { output_dir: out } },
  });
  return auditConfig(config, { repeats, concurrency: 2, print: () => {}, sink: () => {} });
}

const verdicts = (report: AuditReport, task: string) =>
  Object.fromEntries(report.findings.filter((f) => f.task === task).map((f) => [f.probe, f.verdict]));

describe("audit", () => {
  test("the project's own tasks: no critical finding, every cheating probe held or not applicable", async () => {
    const report = await audit("own-tasks.toml");
    expect(report.tasks.sort()).toEqual(["apartmentRent", "rpsTournament"]);
    expect(report.findings.filter((f) => f.critical)).toEqual([]);
    expect(report.critical).toBe(0);
    for (const f of report.findings.filter((f: Finding) => f.group === "cheat"))
      expect([f.probe, ["held", "n/a"].includes(f.verdict)]).toEqual([f.probe, true]);
    const apartment = report.findings.find(
      (f) => f.task === "apartmentRent" && f.probe === "baseline reproduction",
    );
    expect(apartment?.verdict).toBe("ok");
    expect(apartment?.score).toBeCloseTo(0.6384, 3);
    expect(verdicts(report, "rpsTournament")["evaluator determinism"]).toBe("ok");
    const json = JSON.parse(readFileSync(report.files.json, "utf8")) as AuditReport;
    expect(json.findings).toHaveLength(report.findings.length);
    const db = openStore(report.files.sqlite, { readonly: true });
    expect(readLatestAudits(db)).toHaveLength(report.findings.length);
    // Both evaluators are deterministic: zero noise, measured over the repeats and stored for readers.
    expect(verdicts(report, "apartmentRent")["evaluation noise"]).toBe("ok");
    expect(readEvaluationNoise(db)).toEqual({ apartmentRent: 0, rpsTournament: 0 });
    db.$client.close();
  });

  test("planted leaks (fixtures/mlgym, bwrap sandbox): every task-level probe catches its leak", async () => {
    const report = await audit("leaky.toml");
    expect(verdicts(report, "leakyCsv")).toMatchObject({
      "baseline reproduction": "warn",
      "sample submission": "flagged",
      "constant predictions": "flagged",
      "copy of a readable file": "flagged",
      "one-feature rule": "flagged",
      "ground truth by path": "broken",
      "ground truth by find": "broken",
      "ground truth by symlink": "broken",
      "edit evaluation files": "broken",
      "background process": "held",
      "metric names": "warn",
      "metric directions": "warn",
      "score range": "flagged",
    });
    expect(verdicts(report, "leakyGame")).toMatchObject({
      "evaluator determinism": "warn",
      "missing submission": "flagged",
      "ground truth by path": "broken",
      // The evaluator imports strategy.py in its own process, but air's import guard runs it apart: held.
      "fake metrics on stdout": "held",
      "early exit at import": "held",
      "edit evaluation files": "held",
    });
    // Every cheating probe that ran commands is flagged by the env's tamper monitor, as training would flag it.
    const cheats = report.findings.filter((f) => f.group === "cheat" && f.verdict !== "n/a");
    expect(cheats.length).toBeGreaterThanOrEqual(10);
    for (const f of cheats) expect(f.tamper?.length ?? 0, `${f.task}: ${f.probe}`).toBeGreaterThan(0);
    expect(report.findings.filter((f) => f.group === "baseline").every((f) => f.tamper === undefined)).toBe(
      true,
    );
    // leakyGame's simulation is unseeded: its baseline repeats spread.
    const noise = report.findings.find((f) => f.task === "leakyGame" && f.probe === "evaluation noise");
    expect(noise?.score).toBeGreaterThan(0);
    expect(noise?.evidence).toMatch(/^std [\d.e-]+ of Score over 2 baseline evaluations/);
    const copy = report.findings.find((f) => f.task === "leakyCsv" && f.probe === "copy of a readable file");
    expect(copy?.evidence).toContain("data/answers.csv scores 1");
    expect(copy?.evidence).not.toContain("train.csv scores");
    expect(report.critical).toBe(report.findings.filter((f) => f.critical).length);
    expect(report.findings.find((f) => f.probe === "one-feature rule")?.evidence).toMatch(
      /^tag -> .* scores Accuracy 1:/,
    );
    expect(report.critical).toBeGreaterThanOrEqual(13);
  });

  test("planted runtime weakness (local.isolation = none): the background process forges the score", async () => {
    const report = await audit("leaky-unsandboxed.toml", 1);
    const v = verdicts(report, "leakyCsv");
    expect(v["background process"]).toBe("broken");
    expect(v["ground truth by find"]).toBe("broken");
    expect(existsSync(report.files.json)).toBe(true);
  });
});
