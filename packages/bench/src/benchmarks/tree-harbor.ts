import type { BenchReport, Table } from "../report.ts";
import { fmt } from "../stats.ts";
import type { BenchOptions } from "./pipeline.ts";
import { envStepsToReach, type LearnRun, learnRun, stepTable } from "./tree-learn.ts";

/** A Harbor task (data/harbor hello-file, local bubblewrap) learnt by the tiny policy: configs/harbor/learn.toml. */
const CONFIG = "configs/harbor/learn.toml";
/** The verifier's reward is 0 or 1; the target is a step whose mean reward (flat: rollouts; tree: leaves) is ≥ 0.9. */
const TARGET = 0.9;
const TREE = [
  "--run.max_steps",
  "12",
  "--orchestrator.tree.roots",
  "2",
  "--orchestrator.tree.branching_factor",
  "2",
  "--orchestrator.tree.branch_turns",
  "[1]",
];

const total = (run: LearnRun) => run.steps.reduce((a, s) => a + s.envSteps, 0);

/**
 * Benchmark 8b: tree rollouts against flat GRPO on a Harbor task (configs/harbor/learn.toml: hello-file, 2 turns,
 * the tiny policy and trainer), env steps until a step's mean reward reaches 0.9, per seed, side by side.
 * @example const report = await treeHarborBenchmark({ quick: true });
 */
export async function treeHarborBenchmark(options: BenchOptions): Promise<BenchReport> {
  const seeds = options.quick ? [1] : [1, 2, 3];
  const goals: string[] = [];
  const tables: Table[] = [];
  const ratios: number[] = [];
  for (const seed of seeds) {
    const s = ["--run.seed", String(seed)];
    const flat = await learnRun(`harbor-flat-${seed}`, ["--run.max_steps", "10", ...s], false, CONFIG);
    process.stderr.write(`[tree-harbor] seed ${seed} flat: ${fmt(flat.wallS)} s (exit ${flat.code})\n`);
    const tree = await learnRun(`harbor-tree-${seed}`, [...TREE, ...s], true, CONFIG);
    process.stderr.write(`[tree-harbor] seed ${seed} tree: ${fmt(tree.wallS)} s (exit ${tree.code})\n`);
    const fr = envStepsToReach(flat, TARGET);
    const tr = envStepsToReach(tree, TARGET);
    const ratio = fr !== undefined && tr !== undefined ? tr / fr : undefined;
    if (ratio !== undefined) ratios.push(ratio);
    goals.push(
      `hello-file (Harbor, local), seed ${seed}: env steps to a step with mean reward ≥ ${TARGET}, tree ÷ flat: ` +
        `**${ratio === undefined ? `not comparable (flat ${fr ?? "never"}, tree ${tr ?? "never"})` : fmt(ratio)}** ` +
        `(flat ${fr ?? "never"} of ${total(flat)}, tree ${tr ?? "never"} of ${total(tree)}; goal ≤ 0.7) — ` +
        `${ratio !== undefined && ratio <= 0.7 ? "met" : "not met"}`,
    );
    tables.push(stepTable(`hello-file, seed ${seed}`, flat, tree));
  }
  if (ratios.length > 1) {
    const sorted = [...ratios].sort((a, b) => a - b);
    goals.push(
      `median tree ÷ flat over ${ratios.length} seeds: **${fmt(sorted[Math.floor(sorted.length / 2)] as number)}**`,
    );
  }
  return {
    name: "tree-harbor",
    title: "8b. Tree rollouts on a Harbor task",
    command: `bun run bench tree-harbor${options.quick ? " --quick" : ""} --write --timeout-s 1800`,
    machineExtra: [
      `${CONFIG} (local bubblewrap sandboxes), tree runs with roots = 2, branching_factor = 2, branch_turns = [1]`,
    ],
    goals,
    tables,
    notes: [
      "Flat runs are configs/harbor/learn.toml as it is (GRPO, 8 rollouts per step, 4 per example, 2 turns, the " +
        "verifier after the episode); tree runs add `[orchestrator.tree]` (2 roots per example, each forked after " +
        "turn 1 — a fork of the Harbor session: a copy of the WORKDIR in a new sandbox — so an example still has " +
        "4 leaves) and get 12 steps where flat gets 10. Env steps = turns played + auto-submits (each runs the " +
        "verifier). One run per arm and seed on a shared 2-core machine: the tiny policy's curves are noisy, so " +
        "each ratio is an indication, the median over seeds a little more.",
    ],
  };
}
