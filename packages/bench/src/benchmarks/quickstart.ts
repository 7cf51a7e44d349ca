import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runBun } from "../proc.ts";
import type { BenchReport } from "../report.ts";
import { fmt, fmtSpread, spread } from "../stats.ts";
import type { BenchOptions } from "./pipeline.ts";
import { firstClearRise, readRewards, readTimeBreakdown, type StepReward } from "./quickstart-store.ts";

export { firstClearRise } from "./quickstart-store.ts";

const REPO = resolve(import.meta.dir, "../../../..");
const CONFIG = "configs/quickstart.toml";
const TIMEOUT_MS = 10 * 60_000;

interface QuickstartRun {
  code: number;
  wallS: number;
  /** Seconds from the launch until step 0 started. */
  launchS: number;
  rise: number | undefined;
  /** Seconds from the launch until the rollouts of the rise step were done. */
  riseS: number | undefined;
  rewards: StepReward[];
  breakdown: Array<[string, string]>;
}

/** One `bun run rl configs/quickstart.toml` into a temp output dir, bounded by TIMEOUT_MS. */
async function runOnce(): Promise<QuickstartRun> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-quickstart-"));
  const runName = "bench-quickstart";
  const spawnedAt = Date.now();
  try {
    const { stdout, stderr, code, wallS } = await runBun(
      ["packages/launcher/src/bin/rl.ts", CONFIG, "--run.output_dir", out, "--run.name", runName],
      { cwd: REPO, interruptMs: TIMEOUT_MS, killMs: TIMEOUT_MS + 60_000 },
    );
    const dbPath = join(out, runName, "air.db");
    if (!existsSync(dbPath)) {
      throw new Error(
        `the quickstart run exited ${code} after ${fmt(wallS)} s without an air.db (is the sqlite logger in ` +
          `${CONFIG}?). Last output: ${(stderr || stdout).slice(-800)}`,
      );
    }
    const rewards = readRewards(dbPath);
    const rise = firstClearRise(rewards);
    const riseAt = rewards.find((r) => r.step === rise)?.endedAt;
    const firstStart = rewards[0]?.startedAt;
    return {
      code,
      wallS,
      launchS: firstStart === undefined ? Number.NaN : (firstStart - spawnedAt) / 1000,
      rise,
      riseS: riseAt === undefined ? undefined : (riseAt - spawnedAt) / 1000,
      rewards,
      breakdown: readTimeBreakdown(dbPath),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The commit that last changed the config, and whether the working copy differs from it. */
function configVersion(): string {
  const run = (args: string[]) =>
    Bun.spawnSync(["git", ...args], { cwd: REPO, stdout: "pipe", stderr: "ignore" })
      .stdout.toString()
      .trim();
  const commit = run(["log", "-1", "--format=%h", "--", CONFIG]) || "uncommitted";
  const dirty = run(["status", "--porcelain", "--", CONFIG]) !== "";
  return `${CONFIG} at ${commit}${dirty ? " with local changes" : ""}`;
}

function notMeasured(reason: string): BenchReport {
  return {
    name: "quickstart",
    title: "6. Quickstart",
    command: "bun run bench quickstart --write",
    tables: [],
    goals: ["wall time and steps until the tiny policy's reward clearly rises: **not measured yet**"],
    notes: [reason],
  };
}

/**
 * Benchmark 6: runs `bun run rl configs/quickstart.toml` (the launcher, end to end, into a temp output dir)
 * three times and reports the wall time and the first step at which reward clearly rose, read from each run's
 * air.db.
 * @example const report = await quickstartBenchmark({ quick: false });
 */
export async function quickstartBenchmark(options: BenchOptions): Promise<BenchReport> {
  if (!existsSync(join(REPO, CONFIG))) {
    return notMeasured(
      `Not measured: \`${CONFIG}\` does not exist in the repository yet (the full quickstart config is assembled ` +
        "last). Once it exists, `bun run bench quickstart --write` runs it and fills this section.",
    );
  }
  const runs: QuickstartRun[] = [];
  for (let i = 0; i < (options.quick ? 1 : 3); i++) {
    runs.push(await runOnce());
    process.stderr.write(`[quickstart] run ${i + 1}: ${fmt(runs.at(-1)?.wallS ?? Number.NaN)} s\n`);
  }
  const rises = runs.flatMap((r) => (r.rise === undefined ? [] : [r.rise]));
  const riseTimes = runs.flatMap((r) => (r.riseS === undefined ? [] : [r.riseS]));
  const steps = Math.max(...runs.map((r) => r.rewards.length));
  const last = runs.at(-1) as QuickstartRun;
  return {
    name: "quickstart",
    title: "6. Quickstart",
    command: `bun run bench quickstart${options.quick ? " --quick" : ""} --write`,
    machineExtra: [configVersion()],
    goals: [
      `wall time of \`bun run rl ${CONFIG}\` (${runs.length} runs): **${fmtSpread(spread(runs.map((r) => r.wallS)))} s** ` +
        `(exit codes ${runs.map((r) => r.code).join(", ")})`,
      `first step at which reward clearly rose: **${rises.length ? fmtSpread(spread(rises)) : "never"}** of ${steps} ` +
        `steps (rose in ${rises.length} of ${runs.length} runs), reached ` +
        `**${riseTimes.length ? fmtSpread(spread(riseTimes)) : "–"} s** after the launch`,
    ],
    tables: [
      {
        title: "per run",
        headers: [
          "run",
          "wall s",
          "launch → step 0 s",
          "rise at step",
          "rise reached (s after launch)",
          "last step reward",
        ],
        rows: runs.map((r, i) => [
          String(i + 1),
          fmt(r.wallS),
          fmt(r.launchS),
          r.rise === undefined ? "never" : String(r.rise),
          r.riseS === undefined ? "–" : fmt(r.riseS),
          fmt(r.rewards.at(-1)?.mean ?? Number.NaN),
        ]),
      },
      {
        title: "reward mean per step (each run's air.db)",
        headers: ["step", ...runs.map((_, i) => `run ${i + 1}`)],
        rows: Array.from({ length: steps }, (_, s) => [
          String(s),
          ...runs.map((r) => fmt(r.rewards.find((x) => x.step === s)?.mean ?? Number.NaN)),
        ]),
      },
      {
        title: `where the time goes (run ${runs.length}, means from its air.db)`,
        headers: ["part", "value"],
        rows: last.breakdown,
      },
    ],
    notes: [
      "Each run goes into a temp output dir. After the launch (tiny inference server and trainer start, config, " +
        "preflight) the wall time is the steps' rollout phases — env steps dominate them: the commands and the " +
        "auto-submit each start a Python process in the sandbox, while the policy answers in milliseconds — " +
        'plus a short trainer wait per step. "Clearly rose": the rollouts of a step and the one before it, ' +
        "pooled, beat the rollouts of steps 0 and 1, pooled, by Welch's t ≥ 2.5 (one-sided p ≈ 0.01) and by at " +
        "least 0.05 mean reward (from each step's reward mean, std and rollout count).",
    ],
  };
}
