import { afterAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AUDIT_SCHEMA_VERSION, type AuditReport, storeAudit } from "@air/audit";
import { loadConfig } from "@air/core";
import { openStore, recordAudits } from "@air/logger-sqlite";
import { EVALUATION_NOISE_PROBE } from "@air/logger-sqlite/read";
import { builtinRegistry, readAuditFindings } from "./builtins.ts";
import { planLaunch } from "./launch-plan.ts";
import { planOf } from "./run-plan.ts";
import { LAUNCHER_SECTIONS, type RunConfig } from "./sections.ts";
import {
  killSurvivors,
  preflightOf,
  removeTempDirs,
  startLauncher,
  writeFixtureConfig,
} from "./test-helpers.ts";

afterAll(removeTempDirs);

/** The fixture run (no trainer) with the `delta` reward asking for the audit's noise; `rl` runs no preflight. */
async function deltaRun(loggers?: string): Promise<RunConfig> {
  const fx = await writeFixtureConfig({ withTrainer: false, loggers });
  const toml = readFileSync(fx.file, "utf8").replace(
    /\[reward\]\nplugin = [^\n]+\n/,
    '[[reward]]\nplugin = "delta"\nmin_improvement = "noise"\nmetric = "Score"\n',
  );
  writeFileSync(
    fx.file,
    toml
      .replace("[launcher]\n", "[launcher]\npreflight = false\n")
      .replace(`log_level = "error"`, `log_level = "warn"`),
  );
  return loadConfig(fx.file, { registry: builtinRegistry(), extraSections: LAUNCHER_SECTIONS });
}

/** Stores an evaluation-noise finding for `task` in the run's store, as `bun run audit` does. */
function storeNoise(config: RunConfig, task: string, noise: number): void {
  mkdirSync(config.runDir, { recursive: true });
  const db = openStore(join(config.runDir, "air.db"));
  const row = { config: config.file, group: "baseline", verdict: "ok", critical: false, evidence: "e" };
  recordAudits(db, [{ ...row, task, probe: EVALUATION_NOISE_PROBE, score: noise, createdAt: 1 }]);
  db.$client.close();
}

const deltaCheck = (checks: Array<{ name: string; status: string; message: string }>) =>
  checks.find((c) => c.name.includes("delta"));

test("the audit's findings reach the plugins through the launcher: read once from the run's store, none without one", async () => {
  const config = await deltaRun();
  expect(await readAuditFindings(config)).toBeUndefined();
  expect(deltaCheck(await preflightOf(config))).toMatchObject({
    status: "fail",
    message: expect.stringContaining("run `bun run audit <config> --repeats 3` first"),
  });
  storeNoise(config, "t", 0.02);
  // `rl check`: preflight reads the store itself.
  expect(deltaCheck(await preflightOf(config))).toEqual({
    name: "delta: evaluation noise for min_improvement",
    status: "ok",
    message: 'from the latest audit: {"t":0.02}',
  });
  // `rl`: the plan reads it once; preflight and the run's plugins (`ctx.audit`) get the plan's.
  const plan = await planLaunch(
    planOf(config),
    { env: { ...process.env, CUDA_VISIBLE_DEVICES: "" } },
    () => {},
  );
  expect("audit" in plan && plan.audit).toEqual({
    source: join(config.runDir, "air.db"),
    noise: { t: 0.02 },
    critical: [],
  });
});

test("rl: the run's plugins get the plan's findings (delta with min_improvement = \"noise\" starts and finishes)", async () => {
  const config = await deltaRun();
  storeNoise(config, "fixture", 0.5);
  const run = startLauncher([config.file], { timeoutMs: 90_000 });
  try {
    expect(await run.done).toBe(0);
    // delta refuses to start without the findings; with them, it has the fixture task's noise (no warning).
    expect(run.stderr()).not.toContain("no evaluation noise for task fixture");
    expect(run.stdout()).toContain("step 0 (1/1)");
  } finally {
    killSurvivors(run, config.runDir);
  }
}, 120_000);

test("the findings are read from the store the audit wrote: the sqlite logger's own path, not <run dir>/air.db", async () => {
  const config = await deltaRun('[{ plugin = "sqlite", path = "runs.db" }]');
  mkdirSync(config.runDir, { recursive: true });
  const report: AuditReport = {
    schemaVersion: AUDIT_SCHEMA_VERSION,
    configFile: config.file,
    runName: config.root.run.name,
    runtime: "local",
    repeats: 3,
    tasks: ["t"],
    findings: [
      {
        task: "t",
        probe: EVALUATION_NOISE_PROBE,
        group: "baseline",
        verdict: "ok",
        critical: false,
        score: 0.03,
        evidence: "e",
      },
    ],
    critical: 0,
    createdAt: new Date(1000).toISOString(),
    durationMs: 1,
    files: { json: "", sqlite: "" },
  };
  const written = storeAudit(config, report);
  expect(written).toBe(join(config.runDir, "runs.db"));
  expect(await readAuditFindings(config)).toEqual({ source: written, noise: { t: 0.03 }, critical: [] });
});
