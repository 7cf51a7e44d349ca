import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  freePort,
  killSurvivors,
  type LauncherRun,
  REPO_ROOT,
  startLauncher,
  survivors,
} from "@air/launcher/testing";
import { checkStepLines, perStepLogLines } from "@air/loggers/testing";
import { documentedOutputs } from "./test-docs.ts";

/**
 * The quickstart, end to end with no mocks between the parts: the launcher starts the tiny policy server and
 * the tiny trainer as real processes, the orchestrator runs the mlgym env (local runtime) on apartmentRent with
 * real Python training and evaluation, batches go through prime-rl's file transport, weights come back through
 * broadcasts/STABLE and /update_weights. Seeded; max_off_policy_steps = 0.
 *
 * Measured with this config over 10 steps, six runs (sandbox paths enter the prompts, so runs differ):
 *   -0.080 -0.045 -0.045 0.035 0.142 | 0.212 0.212 0.212 0.283 0.248   (first five 0.001, last five 0.233)
 *   -0.249  0.177  0.106 0.177 0.177 | 0.212 0.132 0.283 0.283 0.283   (first five 0.038, last five 0.239)
 *   -0.125 -0.009  0.071 0.106 0.177 | 0.106 0.177 0.248 0.177 0.177   (first five 0.044, last five 0.177)
 *   rises of 0.13 to 0.23 in all six (0.283 is the ceiling: always the random forest). The test runs 12 steps
 * and compares the first five with the last five; it asks for a rise of at least 0.1.
 *
 * Control: the same run with the trainer's lr = 0 (weights are still trained on the batch, broadcast and loaded
 * every step, but never change), so a rise that does not come from learning (a policy or env drifting with the
 * step number or the weights version) shows up there. Measured (12 steps, a fixed policy):
 *   -0.169 -0.125 0.062 -0.089 -0.160 | -0.320 -0.204 | -0.204 0.106 -0.089 0.062 -0.160   (rise 0.039)
 * Step means spread by ~0.13 (8 rollouts a step), so the control fails only on a rise that is both ≥ 0.1 and
 * clear (Welch t ≥ 2.5 over the rollouts, the bench's rule). Both runs also check that the trainer trained on
 * samples every step (`trainer/progress/samples` > 0).
 */
const CONFIG = join(REPO_ROOT, "configs", "quickstart.toml");
const MARGIN = 0.1;
/** Two more steps than the config's 10, so the last five sit further from the random start. */
const STEPS = 12;

let current: { run?: LauncherRun; runDir?: string; out?: string } = {};
afterEach(() => {
  if (current.runDir) killSurvivors(current.run, current.runDir);
  if (current.out) rmSync(current.out, { recursive: true, force: true });
  current = {};
});

interface QuickstartRun {
  /** `reward/mean` per step. */
  rewards: number[];
  /** `reward/std` (population) and `rollout/count` per step, for the rollout-level t of a rise. */
  stds: number[];
  counts: number[];
  /** `trainer/progress/samples` per step: what the trainer really trained on. */
  trained: number[];
  steps: number[];
  /** `trainer/mismatch` per step. */
  mismatch: number[];
  /** `trainer/lr` per step, as the tiny trainer reports it. */
  lr: number[];
  /** The weights version each step's rollouts were generated with. */
  versions: number[];
  survivors: string[];
}

/** Runs configs/quickstart.toml through the launcher for `STEPS` steps with extra `--key=value` overrides. */
async function runQuickstart(label: string, overrides: string[] = []): Promise<QuickstartRun> {
  const out = mkdtempSync(join(tmpdir(), "air-quickstart-"));
  const runDir = join(out, "quickstart");
  const port = await freePort();
  const run = startLauncher(
    [
      CONFIG,
      `--run.output_dir="${out}"`,
      `--run.max_steps=${STEPS}`,
      `--inference.port=${port}`,
      `--policy.base_url="http://127.0.0.1:${port}/v1"`,
      ...overrides,
    ],
    { cwd: out, timeoutMs: 420_000 },
  );
  current = { run, runDir, out };
  const code = await run.done;
  if (code !== 0) throw new Error(`launcher exited ${code}:\n${run.stderr().slice(-3000)}`);
  expect(existsSync(join(runDir, "air.db"))).toBe(true);
  // The step lines as printed, against the store: an MLGym env scores and the mlgym parser can fail, so both
  // columns are shown and agree with the rows; seconds and turns/s within a factor of the store's.
  expect(
    checkStepLines(run.stdout(), join(runDir, "air.db"), { present: ["no-score", "parse-err", "turns/s"] }),
  ).toEqual([]);
  // One progress display: nothing else prints a line every step (policy counters, weight loads).
  expect(perStepLogLines(`${run.stdout()}${run.stderr()}`)).toEqual([]);
  // What the docs name in the quickstart's run dir (`bun run viz outputs/quickstart`) is there after the run.
  for (const { rel, cmd } of documentedOutputs(CONFIG))
    expect({ where: cmd.where, path: rel, exists: existsSync(join(runDir, rel)) }).toMatchObject({
      exists: true,
    });

  const db = new Database(join(runDir, "air.db"), { readonly: true });
  const series = (name: string) =>
    db.query("SELECT step, value FROM metrics WHERE name = ? ORDER BY step").all(name) as Array<{
      step: number;
      value: number;
    }>;
  const rows = series("reward/mean");
  const versions = db.query("SELECT policy_version AS v FROM steps ORDER BY step").all() as Array<{
    v: number | null;
  }>;
  const result: QuickstartRun = {
    rewards: rows.map((r) => r.value),
    stds: series("reward/std").map((r) => r.value),
    counts: series("rollout/count").map((r) => r.value),
    trained: series("trainer/progress/samples").map((r) => r.value),
    steps: rows.map((r) => r.step),
    mismatch: series("trainer/mismatch").map((r) => r.value),
    lr: series("trainer/lr").map((r) => r.value),
    versions: versions.map((r) => r.v ?? -1),
    survivors: survivors(run, runDir),
  };
  db.close();
  process.stderr.write(
    `quickstart ${label} reward means: ${result.rewards.map((r) => r.toFixed(3)).join(" ")}\n`,
  );
  return result;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** Mean reward of the last five steps minus that of the first five. */
const rise = (rewards: number[]) => mean(rewards.slice(-5)) - mean(rewards.slice(0, 5));

/** Welch's t of that rise over the rollouts of the two windows (pooled from per-step mean, std and count). */
function riseT(run: QuickstartRun): number {
  const pool = (from: number, to: number | undefined) => {
    const idx = run.rewards.map((_, i) => i).slice(from, to);
    const n = idx.reduce((a, i) => a + (run.counts[i] ?? 0), 0);
    const m = idx.reduce((a, i) => a + (run.rewards[i] ?? 0) * (run.counts[i] ?? 0), 0) / n;
    const v =
      idx.reduce(
        (a, i) => a + (run.counts[i] ?? 0) * ((run.stds[i] ?? 0) ** 2 + ((run.rewards[i] ?? 0) - m) ** 2),
        0,
      ) / n;
    return { n, m, v };
  };
  const before = pool(0, 5);
  const after = pool(-5, undefined);
  return (after.m - before.m) / Math.sqrt(before.v / before.n + after.v / after.n);
}
const ALL_STEPS = Array.from({ length: STEPS }, (_, i) => i);

describe("quickstart: the tiny policy learns on apartmentRent", () => {
  test("mean reward of the last 5 steps beats the first 5 by the margin; mismatch ≈ 0; nothing left running", async () => {
    const run = await runQuickstart("learning");
    expect(run.steps).toEqual(ALL_STEPS);
    expect(run.trained.length).toBe(STEPS);
    expect(run.trained.every((n) => n > 0)).toBe(true);
    expect(run.lr.every((lr) => lr > 0)).toBe(true);
    expect(rise(run.rewards)).toBeGreaterThan(MARGIN);
    expect(run.mismatch).toHaveLength(STEPS);
    for (const m of run.mismatch) expect(Math.abs(m)).toBeLessThan(1e-6);
    expect(run.survivors).toEqual([]);
  }, 450_000);

  test("control: with lr = 0 the weights are still broadcast every step, but the reward does not rise", async () => {
    const run = await runQuickstart("lr=0 control", ["--trainer_process.lr=0"]);
    expect(run.steps).toEqual(ALL_STEPS);
    // Weights really went round: every step's rollouts used the version trained by the step before.
    expect(run.versions).toEqual(ALL_STEPS);
    expect(run.lr).toEqual(ALL_STEPS.map(() => 0));
    expect(run.trained.length).toBe(STEPS);
    expect(run.trained.every((n) => n > 0)).toBe(true);
    // Not a rise the learning run would pass with, unless it is also within the noise: with 8 rollouts a step,
    // step means of a fixed policy spread by ~0.13, so "< MARGIN" alone fails ~10% of good runs. A clear rise
    // (bench's rule: Welch t ≥ 2.5 over the rollouts, one-sided p ≈ 0.01) of at least MARGIN fails the test.
    const t = riseT(run);
    process.stderr.write(
      `quickstart lr=0 control: rise ${rise(run.rewards).toFixed(3)}, Welch t ${t.toFixed(2)}\n`,
    );
    expect(rise(run.rewards) < MARGIN || t < 2.5).toBe(true);
    for (const m of run.mismatch) expect(Math.abs(m)).toBeLessThan(1e-6);
    expect(run.survivors).toEqual([]);
  }, 450_000);
});
