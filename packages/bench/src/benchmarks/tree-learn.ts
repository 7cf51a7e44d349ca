import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runBun } from "../proc.ts";
import type { Table } from "../report.ts";
import { fmt } from "../stats.ts";

const REPO = resolve(import.meta.dir, "../../../..");
export const QUICKSTART = "configs/quickstart.toml";
const TIMEOUT_MS = 10 * 60_000;

/** One step of a run, read back from its air.db. */
export interface StepFigures {
  step: number;
  /** Mean return of the rollouts trained on (flat: every rollout; tree: the leaves). */
  reward: number;
  /** Env steps this step: turns played plus auto-submits. */
  envSteps: number;
  /** Fraction of groups (flat) or sibling sets (tree) whose returns were all equal. */
  zeroVarianceFrac: number;
  /** Std of the advantages over every turn. */
  advantageStd: number;
  /** Model tokens trained on (loss mask 1). */
  lossTokens: number;
}

export interface LearnRun {
  label: string;
  wallS: number;
  code: number;
  steps: StepFigures[];
}

function metricsByStep(db: Database): Map<number, Map<string, number>> {
  const rows = db
    .query(
      "SELECT step, name, value FROM metrics WHERE source = 'step' AND run_id = (SELECT max(id) FROM runs) ORDER BY step",
    )
    .all() as Array<{ step: number; name: string; value: number }>;
  const by = new Map<number, Map<string, number>>();
  for (const r of rows) by.set(r.step, (by.get(r.step) ?? new Map()).set(r.name, r.value));
  return by;
}

/** Env steps per step: each trajectory's turns, plus one auto-submit for each that ran out of turns. */
function envStepsByStep(db: Database): Map<number, number> {
  const rows = db
    .query(
      `SELECT step, sum(turn_count) + sum(CASE WHEN stop_reason = 'max_turns' THEN 1 ELSE 0 END) AS n
       FROM trajectories WHERE run_id = (SELECT max(id) FROM runs) GROUP BY step`,
    )
    .all() as Array<{ step: number; n: number }>;
  return new Map(rows.map((r) => [r.step, r.n]));
}

/** Reads a finished run's per-step figures; a tree run reports leaf returns and sibling sets. */
export function readLearnRun(dbPath: string, tree: boolean): StepFigures[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const metrics = metricsByStep(db);
    const env = envStepsByStep(db);
    return [...metrics.entries()].map(([step, m]) => ({
      step,
      reward: (tree ? m.get("tree/leaf_reward/mean") : m.get("reward/mean")) ?? Number.NaN,
      envSteps: env.get(step) ?? 0,
      zeroVarianceFrac:
        (tree ? m.get("advantage/sibling_zero_variance_frac") : m.get("group/zero_variance_frac")) ??
        Number.NaN,
      advantageStd: m.get("advantage/std") ?? Number.NaN,
      lossTokens: m.get("batch/loss_tokens") ?? 0,
    }));
  } finally {
    db.close();
  }
}

/**
 * Runs `bun run rl <config>` (default configs/quickstart.toml) with `overrides` into a temp output dir and reads
 * its air.db.
 * @example const run = await learnRun("tree", ["--orchestrator.tree.roots", "2"], true);
 */
export async function learnRun(
  label: string,
  overrides: string[],
  tree: boolean,
  config = QUICKSTART,
): Promise<LearnRun> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-tree-"));
  // A port of its own: another quickstart on the shared machine (a test, a colleague's run) owns 8312.
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const ports = ["--inference.port", String(port), "--policy.base_url", `http://127.0.0.1:${port}/v1`];
  const runName = `bench-tree-${label.replace(/[^A-Za-z0-9_-]/g, "-")}`;
  const argv = ["packages/launcher/src/bin/rl.ts", config, "--run.output_dir", out, "--run.name", runName];
  try {
    const { stdout, stderr, code, wallS } = await runBun([...argv, ...ports, ...overrides], {
      cwd: REPO,
      interruptMs: TIMEOUT_MS,
      killMs: TIMEOUT_MS + 60_000,
    });
    const dbPath = join(out, runName, "air.db");
    if (!existsSync(dbPath)) {
      throw new Error(`run ${label} exited ${code} without an air.db: ${(stderr || stdout).slice(-800)}`);
    }
    return { label, wallS, code, steps: readLearnRun(dbPath, tree) };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Cumulative env steps at the end of the first step whose reward reached `target`; undefined if none did. */
export function envStepsToReach(run: LearnRun, target: number): number | undefined {
  let total = 0;
  for (const s of run.steps) {
    total += s.envSteps;
    if (s.reward >= target) return total;
  }
  return undefined;
}

/**
 * The per-step table of a flat and a tree run side by side: reward (flat: rollouts; tree: leaves), env steps.
 * @example tables.push(stepTable("quickstart, seed 1", flat, tree));
 */
export function stepTable(title: string, flat: LearnRun, tree: LearnRun): Table {
  return {
    title: `${title}: reward (flat: rollouts; tree: leaves) and env steps per step`,
    headers: ["step", "flat reward", "flat env steps", "tree reward", "tree env steps"],
    rows: Array.from({ length: Math.max(flat.steps.length, tree.steps.length) }, (_, i) => [
      String(i),
      fmt(flat.steps[i]?.reward ?? Number.NaN),
      String(flat.steps[i]?.envSteps ?? "–"),
      fmt(tree.steps[i]?.reward ?? Number.NaN),
      String(tree.steps[i]?.envSteps ?? "–"),
    ]),
  };
}
