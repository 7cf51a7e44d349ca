import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchReport } from "../report.ts";
import { fmt, seededRandom } from "../stats.ts";
import type { BenchOptions } from "./pipeline.ts";
import { median, type SnapshotCost, snapshotCost } from "./resume-cost.ts";
import { KILL_CONFIGS, type KillOutcome, type KillTask, killAndResume } from "./resume-kill.ts";
import { dockerReady } from "./tree-fork.ts";

/** Steps of each killed run: the kill lands in step 1 or 2, and the resume finishes the run. */
const MAX_STEPS = 3;
/**
 * Kills land uniformly in this window after step 0 was trained, per task: a quickstart step takes ~5–15 s here, a
 * Harbor hello-file step ~1–3 s (with 8 s every Harbor kill came after its run had finished).
 */
const WINDOW_MS: Record<KillTask, number> = { quickstart: 8000, harbor: 1500 };

function lost(outcomes: KillOutcome[]): {
  perRollout: number;
  inFlight: number;
  recorded: number;
  redone: number;
} {
  const inFlight = outcomes.reduce((a, o) => a + o.inFlight, 0);
  const recorded = outcomes.reduce((a, o) => a + o.recordedTurns, 0);
  const redone = outcomes.reduce((a, o) => a + o.redone, 0);
  return { perRollout: inFlight ? redone / inFlight : Number.NaN, inFlight, recorded, redone };
}

/**
 * Benchmark 16: what a crash costs with durable rollouts (`orchestrator.resume_rollouts`) and without, and what
 * recording a turn's state costs. Kills: the 4-turn quickstart (tiny inference and trainer, mlgym on bubblewrap)
 * and a Harbor task (configs/harbor/learn.toml: hello-file on bubblewrap, 4 turns) are each killed -9 with their
 * children at seeded random moments after step 0 (20 per arm, 3 with `--quick`), then `--resume`d, alternating
 * the arms kill by kill. Cost: `saveState` after a `python train.py` turn on apartmentRent, 1 MB and 100 MB of agent files,
 * local and docker. `--cost-only` on the command line skips the kills (the cost cells alone, side by side).
 * @example const report = await resumeBenchmark({ quick: true });
 */
export async function resumeBenchmark(options: BenchOptions): Promise<BenchReport> {
  const kills = process.argv.includes("--cost-only") ? 0 : options.quick ? 3 : 20;
  const turns = options.quick ? 3 : 8;
  const tasks = Object.keys(KILL_CONFIGS) as KillTask[];
  const outcomes: KillOutcome[] = [];
  const failures: string[] = [];
  for (const task of tasks) {
    const rand = seededRandom(36);
    for (let i = 0; i < kills; i++) {
      const delay = Math.floor(rand() * WINDOW_MS[task]);
      for (const arm of ["today", "now"] as const) {
        try {
          outcomes.push(await killAndResume(task, arm, delay, MAX_STEPS));
          process.stderr.write(
            `[resume] ${task} kill ${i + 1}/${kills} ${arm}: ${JSON.stringify(outcomes.at(-1))}\n`,
          );
        } catch (error) {
          failures.push(`${task} kill ${i + 1} (${arm}) failed: ${String(error).slice(0, 300)}`);
        }
      }
    }
  }
  const of = (task: KillTask | undefined, arm: "today" | "now") =>
    outcomes.filter((o) => o.arm === arm && (task === undefined || o.task === task));
  const today = lost(of(undefined, "today"));
  const now = lost(of(undefined, "now"));
  const perTask = tasks.map((task) => ({ task, today: lost(of(task, "today")), now: lost(of(task, "now")) }));

  const root = mkdtempSync(join(tmpdir(), "air-bench-resume-cost-"));
  const costs: SnapshotCost[] = [];
  try {
    const runtimes: Array<"local" | "docker"> = (await dockerReady()) ? ["local", "docker"] : ["local"];
    for (const runtime of runtimes)
      for (const mb of [1, 100]) {
        try {
          costs.push(await snapshotCost(runtime, mb, join(root, `${runtime}-${mb}`), turns));
        } catch (error) {
          failures.push(`snapshot cost ${runtime} ${mb} MB failed: ${String(error).slice(0, 300)}`);
        }
      }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const ratio = (c: SnapshotCost) => median(c.saveMs.map((s, i) => s / (c.turnMs[i] as number)));
  const worstLocal = Math.max(...costs.filter((c) => c.runtime === "local").map(ratio));
  const dockerCosts = costs.filter((c) => c.runtime === "docker");
  const report: BenchReport = {
    name: "resume",
    title: "16. Durable rollouts: work lost per crash, snapshot cost per turn",
    command: `bun run bench resume${options.quick ? " --quick" : ""}${kills === 0 ? " --cost-only" : ""} --write`,
    goals: [
      `environment steps redone ÷ in-flight rollouts per crash ≤ 1: **${fmt(now.perRollout)}** with resume_rollouts (today, without: **${fmt(today.perRollout)}**) — ${now.perRollout <= 1 ? "met" : "missed"}`,
      ...perTask.map(
        (t) =>
          `${t.task}: **${fmt(t.now.perRollout)}** with resume_rollouts, **${fmt(t.today.perRollout)}** without`,
      ),
      `snapshot time per turn ÷ the turn's wall time ≤ 5% local (the worse of 1 MB and 100 MB): **${fmt(100 * worstLocal)}%** — ${worstLocal <= 0.05 ? "met" : "missed"}`,
      ...(dockerCosts.length
        ? [`docker: **${dockerCosts.map((c) => `${fmt(100 * ratio(c))}% at ${c.mb} MB`).join(", ")}**`]
        : ["docker: not measured (no engine or no test image)"]),
    ],
    tables: [
      {
        title: `kill -9 of a 4-turn run with its children, then --resume (${kills} seeded moments per task after step 0, within ${tasks.map((t) => `${WINDOW_MS[t] / 1000} s (${t})`).join(", ")}; both arms at each)`,
        headers: [
          "task",
          "arm",
          "crashes",
          "rollouts in flight",
          "their recorded turns",
          "turns redone",
          "redone ÷ in flight",
        ],
        rows: tasks.flatMap((task) =>
          [
            [
              task,
              "today (resume_rollouts = false)",
              lost(of(task, "today")),
              of(task, "today").length,
            ] as const,
            [task, "now (resume_rollouts = true)", lost(of(task, "now")), of(task, "now").length] as const,
          ].map(([t, name, l, n]) => [
            t,
            name,
            String(n),
            String(l.inFlight),
            String(l.recorded),
            String(l.redone),
            fmt(l.perRollout),
          ]),
        ),
      },
      {
        title: `per turn, p50 ms (n = ${turns}): the turn is apartmentRent's \`python train.py\` through the mlgym env; save = \`saveState\` after it`,
        headers: [
          "runtime",
          "agent files",
          "snapshot bytes",
          "turn",
          "save",
          "save ÷ turn (paired)",
          "restore",
          "sent per save, p50 bytes (first save)",
        ],
        rows: costs.map((c) => [
          c.runtime,
          `${c.mb} MB`,
          String(c.bytes),
          fmt(median(c.turnMs)),
          fmt(median(c.saveMs)),
          `${fmt(100 * ratio(c))}%`,
          fmt(median(c.restoreMs)),
          c.sentBytes.length ? `${fmt(median(c.sentBytes))} (${c.sentBytes[0]})` : "—",
        ]),
      },
    ],
    notes: [
      ...failures,
      ...outcomes
        .filter((o) => o.arm === "now" && o.redone > 0)
        .map(
          (o) =>
            `${o.task}, kill at ${o.atMs} ms: ${o.redone} turn(s) redone with resume_rollouts; the run's log said: ${o.why.join(" | ").slice(0, 400) || "nothing (the store kept no resume point for that rollout's last turn)"}`,
        ),
      "Redone: a recorded turn of a rollout that was at risk (an untrained step, at least one turn stored) whose " +
        "rollout did not continue from it after `--resume` (without resume_rollouts the store drops the interrupted " +
        "steps' rows and every such rollout starts over). The turn in progress at the kill is lost in both arms and " +
        "not counted; a rollout that had already ended (its step untrained) is taken as it was, with no env step. " +
        "The reference turn is short: the project's apartmentRent `python train.py` takes 0.1–0.5 s, and generation " +
        "is left out (the tiny policy's replies take milliseconds); an MLGym turn that trains for minutes, or a real " +
        "model's seconds of generation, make every ratio smaller. Local snapshots: a tree of the workspace copied " +
        "in-process (reflinks on btrfs/XFS; ext4 here copies), files unchanged since the sandbox's last snapshot " +
        "hard-linked (the 100 MB model is written once, before the turns). Docker: the same tree on this machine; the " +
        "container lists the workspace (inode, change time, size per file) and tars only what changed since the " +
        "sandbox's last snapshot, the rest hard-linked from it here (the first save sends the model).",
    ],
  };
  // --cost-only: the crash figures were not measured, so they are not reported
  if (kills === 0) {
    report.goals = report.goals.slice(1 + tasks.length);
    report.tables = report.tables.slice(1);
  }
  return report;
}
