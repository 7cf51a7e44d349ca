import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runBun } from "../proc.ts";
import type { BenchReport } from "../report.ts";
import { fmt, fmtSpread, spread } from "../stats.ts";
import { guardTimes } from "./guard-time.ts";
import type { BenchOptions } from "./pipeline.ts";

const REPO = resolve(import.meta.dir, "../../../..");
const FIXTURES = join(REPO, "packages/audit/fixtures/mlgym");
const TIMEOUT_MS = 15 * 60_000;
const REPEATS = 3;
/** MLGym's own tasks, audited when MLGYM_ROOT names a checkout (house price needs its generated data). */
const UPSTREAM = ["titanic", "battleOfSexes", "prisonersDilemma", "blotto", "regressionKaggleHousePrice"];

interface AuditJson {
  tasks: string[];
  critical: number;
  findings: Array<{ task: string; probe: string; verdict: string; critical: boolean }>;
}

interface AuditRun {
  set: string;
  code: number;
  wallS: number;
  report: AuditJson;
}

/**
 * A temp MLGym root with five tasks of air's own: apartmentRent and rpsTournament (the repository's), the two
 * audit fixtures with planted leaks, and apartmentRent again under another id (a fifth CSV task).
 */
function ownRoot(dir: string): string[] {
  for (const sub of ["configs/tasks", "configs/datasets", "data"])
    mkdirSync(join(dir, sub), { recursive: true });
  for (const [from, names] of [
    [REPO, ["apartmentRent", "rpsTournament"]],
    [FIXTURES, ["leakyCsv", "leakyGame"]],
  ] as const) {
    for (const name of names) {
      cpSync(join(from, "configs/tasks", `${name}.yaml`), join(dir, "configs/tasks", `${name}.yaml`));
      const ds = join(from, "configs/datasets", `${name}.yaml`);
      if (existsSync(ds)) cpSync(ds, join(dir, "configs/datasets", `${name}.yaml`));
      cpSync(join(from, "data", name), join(dir, "data", name), { recursive: true });
    }
  }
  const copy = readFileSync(join(dir, "configs/tasks/apartmentRent.yaml"), "utf8").replace(
    /^id: apartmentRent$/m,
    "id: apartmentRentCopy",
  );
  writeFileSync(join(dir, "configs/tasks/apartmentRentCopy.yaml"), copy);
  return ["apartmentRent", "rpsTournament", "leakyCsv", "leakyGame", "apartmentRentCopy"];
}

function config(root: string, tasks: string[], out: string): string {
  return [
    "logger = []",
    "[run]",
    'name = "bench-audit"',
    `output_dir = ${JSON.stringify(out)}`,
    "[model]",
    'name = "none"',
    "[orchestrator]",
    "max_concurrent_rollouts = 2",
    "[env]",
    'plugin = "mlgym"',
    `mlgym_root = ${JSON.stringify(root)}`,
    `tasks = ${JSON.stringify(tasks)}`,
    'runtime = "local"',
    "[policy]",
    'plugin = "scripted"',
    "[trainer]",
    'plugin = "none"',
    "[advantage]",
    'plugin = "grpo"',
    "[strategy]",
    'plugin = "branching"',
    "[reward]",
    'plugin = "delta"',
    "",
  ].join("\n");
}

/** One `bun run audit` of `tasks` under `root` (5 tasks × 3 repeats, 2 probe rollouts at a time), timed. */
async function runOnce(set: string, root: string, tasks: string[]): Promise<AuditRun> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-audit-"));
  const file = join(out, "audit.toml");
  writeFileSync(file, config(root, tasks, out));
  try {
    const { stdout, stderr, code, wallS } = await runBun(
      ["packages/launcher/src/bin/audit.ts", file, "--repeats", String(REPEATS)],
      { cwd: REPO, killMs: TIMEOUT_MS },
    );
    const json = join(out, "bench-audit", "audit.json");
    if (!existsSync(json))
      throw new Error(`the audit exited ${code} without audit.json: ${(stderr || stdout).slice(-800)}`);
    return { set, code, wallS, report: JSON.parse(readFileSync(json, "utf8")) as AuditJson };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * Benchmark 9: `bun run audit` of five tasks × three baseline repeats on the local (bwrap) runtime, two probe
 * rollouts at a time (the machine's two cores): air's own tasks and the audit fixtures, and MLGym's five
 * reference tasks when `MLGYM_ROOT` names a checkout. Goal: at most 5 minutes per audit.
 * @example const report = await auditBenchmark({ quick: true });
 */
export async function auditBenchmark(options: BenchOptions): Promise<BenchReport> {
  const runs: AuditRun[] = [];
  const scratch = mkdtempSync(join(tmpdir(), "air-bench-audit-root-"));
  try {
    const own = ownRoot(scratch);
    for (let i = 0; i < (options.quick ? 1 : 2); i++) {
      runs.push(await runOnce("air's tasks + fixtures", scratch, own));
      process.stderr.write(`[audit] own tasks, run ${i + 1}: ${fmt(runs.at(-1)?.wallS ?? Number.NaN)} s\n`);
    }
    const upstream = process.env.MLGYM_ROOT;
    if (upstream && existsSync(join(upstream, "configs/tasks/titanic.yaml"))) {
      runs.push(await runOnce("MLGym (MLGYM_ROOT)", resolve(upstream), UPSTREAM));
      process.stderr.write(`[audit] MLGym tasks: ${fmt(runs.at(-1)?.wallS ?? Number.NaN)} s\n`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const guard = await guardTimes(options.quick ? 3 : 5);
  const sets = [...new Set(runs.map((r) => r.set))];
  return {
    name: "audit",
    title: "9. Task audit",
    command: `${process.env.MLGYM_ROOT ? "MLGYM_ROOT=<checkout> " : ""}bun run bench audit${options.quick ? " --quick" : ""} --write`,
    goals: sets
      .map((set) => {
        const walls = runs.filter((r) => r.set === set).map((r) => r.wallS);
        const worst = Math.max(...walls);
        return (
          `\`bun run audit\` of 5 tasks × ${REPEATS} repeats, 2 rollouts at a time (${set}, ${walls.length} run(s)): ` +
          `**${fmtSpread(spread(walls))} s** — goal ≤ 300 s: ${worst <= 300 ? "met" : "**not met**"}`
        );
      })
      .concat(guard.goals),
    tables: [
      {
        title: "import guard: evaluation time (median s)",
        headers: guard.headers,
        rows: guard.rows,
      },
      {
        title: "per run",
        headers: ["tasks", "run", "wall s", "exit", "findings", "critical (by task)"],
        rows: runs.map((r, i) => [
          r.set,
          String(i + 1),
          fmt(r.wallS),
          String(r.code),
          String(r.report.findings.length),
          r.report.tasks
            .map((t) => `${t} ${r.report.findings.filter((f) => f.task === t && f.critical).length}`)
            .join(", "),
        ]),
      },
    ],
    notes: [
      "Import guard: each game evaluation run on the host with /usr/bin/python3, plain (`python evaluate.py`, the " +
        "agent's strategy imported in the evaluator's process, as MLGym does) and under air's import guard (the " +
        "strategy in a separate confined process, one pipe round trip per call), alternated; medians. The " +
        "guard's cost is a fixed ~0.1 s (a second interpreter) plus one round trip (~15–50 µs here) per call of " +
        "the agent's function: MLGym's games call it 100000 times per evaluation.",
      "Each audit is the launcher end to end (`bun packages/launcher/src/bin/audit.ts`, config loading, the env's " +
        "task bundles, one fresh bwrap sandbox per probe rollout) into a temp output dir. Per task: 3 baseline " +
        "rollouts and up to 11 probe rollouts, each a short scripted episode ending in one or more evaluations; " +
        "evaluations dominate (a Python process per evaluation, ~0.1 s for air's stdlib evaluators, 0.4–2.8 s for " +
        "MLGym's, which import pandas/sklearn). Exit 1 is expected: the fixtures carry planted leaks, and " +
        "MLGym's titanic and games have real ones.",
    ],
  };
}
