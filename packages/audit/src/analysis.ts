import { KNOWN_TASK_DIRECTIONS, lookupMetric } from "@air/env-mlgym";
import { impossibleScore } from "@air/reward-delta";
import type { TaskFacts } from "./facts.ts";
import { priorityScore } from "./scores.ts";
import { FORGED } from "./shell.ts";
import type { Finding, ProbeRun } from "./types.ts";

/** Mean and (sample) standard deviation. @example meanStd([1, 3]) // { mean: 2, std: 1.414… } */
export function meanStd(values: number[]): { mean: number; std: number } {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance =
    values.length > 1 ? values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1) : 0;
  return { mean, std: Math.sqrt(variance) };
}

const fmt = (x: number) => (Math.abs(x) >= 1000 ? x.toFixed(1) : Number(x.toPrecision(5)).toString());

/**
 * The baseline findings from N repeats: reproduction (mean ± std against the YAML's baseline_scores; off by more
 * than max(3 std, 1% of |baseline|) is a warning) and determinism (any spread across repeats).
 * @example baselineFindings(facts, runs) // [{ probe: "baseline reproduction", verdict: "ok", ... }, ...]
 */
export function baselineFindings(facts: TaskFacts, runs: ProbeRun[]): Omit<Finding, "task">[] {
  const task = facts.task;
  const yaml = lookupMetric(task.baselineScores, task.priorityMetric);
  if (!facts.baselineRunnable)
    return [
      {
        probe: "baseline reproduction",
        group: "baseline",
        verdict: "warn",
        critical: false,
        evidence: `the YAML names no baseline script (baseline_paths); its ${task.priorityMetric} ${yaml ?? "?"} cannot be rerun`,
      },
    ];
  const scores = runs.map((r) => priorityScore(facts, r.turns.at(-1)?.scores));
  const ok = scores.filter((s): s is number => s !== undefined);
  if (ok.length === 0) {
    const why = runs.map((r) => r.error ?? r.turns.at(-1)?.evaluationError ?? "no score")[0] ?? "no runs";
    return [
      {
        probe: "baseline reproduction",
        group: "baseline",
        verdict: "warn",
        critical: false,
        evidence: `the baseline (${facts.baselineCommands.join("; ") || "starter code"}) produced no score: ${why.replace(/\s+/g, " ").slice(0, 200)}`,
      },
    ];
  }
  const { mean, std } = meanStd(ok);
  const spread = Math.max(...ok) - Math.min(...ok);
  const tolerance = Math.max(3 * std, 0.01 * Math.abs(yaml ?? 0), 1e-9);
  const off = yaml !== undefined && Math.abs(mean - yaml) > tolerance;
  const failed = scores.length - ok.length;
  return [
    {
      probe: "baseline reproduction",
      group: "baseline",
      verdict: off || failed > 0 || yaml === undefined ? "warn" : "ok",
      critical: false,
      score: mean,
      evidence:
        `${task.priorityMetric} ${fmt(mean)} ± ${fmt(std)} (n=${ok.length}${failed ? `, ${failed} without a score` : ""}) vs YAML ${yaml ?? "none"}` +
        (off ? " — not reproduced" : ""),
    },
    {
      probe: "evaluator determinism",
      group: "baseline",
      verdict: ok.length < 2 ? "n/a" : spread > 0 ? "warn" : "ok",
      critical: false,
      evidence:
        ok.length < 2
          ? "one repeat: use --repeats 2 or more"
          : spread > 0
            ? `scores vary across ${ok.length} repeats (spread ${fmt(spread)}): compare policies over several evaluations`
            : `identical across ${ok.length} repeats`,
    },
  ];
}

/**
 * Metric sanity: the YAML's metric names in the evaluator's output, each metric's direction (declared in the
 * YAML, in MLGym's table, or only guessed from its name), and every score seen by a non-forging probe (and the
 * YAML baseline) inside the metric's plausible range (accuracy ≤ 1, r2 ≤ 1, rmse ≥ 0) — outside is critical.
 * @example metricFindings(facts, baselineRuns, everyRun)
 */
export function metricFindings(
  facts: TaskFacts,
  baselineRuns: ProbeRun[],
  allRuns: ProbeRun[],
): Omit<Finding, "task">[] {
  const task = facts.task;
  const out: Omit<Finding, "task">[] = [];
  const yamlNames = Object.keys(task.baselineScores);
  // What the evaluator prints: the baseline's scores, else the first unforged scores of any probe.
  const unforged = (scores: Record<string, number> | undefined) =>
    scores !== undefined && !Object.values(scores).some((v) => Math.abs(v - FORGED) < 1e-6);
  const printed =
    baselineRuns.map((r) => r.turns.at(-1)?.scores).find(unforged) ??
    allRuns.flatMap((r) => r.turns.map((t) => t.scores)).find(unforged);
  if (!printed) {
    out.push({
      probe: "metric names",
      group: "metric",
      verdict: "n/a",
      critical: false,
      evidence: "no probe produced scores to compare with",
    });
  } else {
    const missing = yamlNames.filter((n) => lookupMetric(printed, n) === undefined);
    const extra = Object.keys(printed).filter((n) => lookupMetric(task.baselineScores, n) === undefined);
    out.push({
      probe: "metric names",
      group: "metric",
      verdict: missing.length > 0 ? "warn" : "ok",
      critical: false,
      evidence:
        missing.length > 0
          ? `YAML metric(s) ${missing.join(", ")} not in the evaluator's output ${JSON.stringify(printed)}`
          : `YAML ${yamlNames.join(", ") || "(none)"}; evaluator prints ${Object.keys(printed).join(", ")}${extra.length ? ` (extra: ${extra.join(", ")})` : ""}`,
    });
  }
  const guessed = Object.keys(task.directions).filter(
    (m) => lookupMetric(KNOWN_TASK_DIRECTIONS[task.id] ?? {}, m) === undefined && !yamlDeclares(facts, m),
  );
  out.push({
    probe: "metric directions",
    group: "metric",
    verdict: guessed.length > 0 ? "warn" : "ok",
    critical: false,
    evidence:
      Object.entries(task.directions)
        .map(
          ([m, d]) =>
            `${m} ${d}${guessed.includes(m) ? " (guessed from the name: set metric_directions in the YAML)" : ""}`,
        )
        .join(", ") || "no metrics",
  });
  const impossible: string[] = [];
  for (const [m, v] of Object.entries(task.baselineScores)) {
    const why = impossibleScore(m, v, task.scoreRanges);
    if (why) impossible.push(`YAML baseline ${why}`);
  }
  for (const run of allRuns)
    for (const turn of run.turns)
      for (const [m, v] of Object.entries(turn.scores ?? {})) {
        if (Math.abs(v - FORGED) < 1e-6) continue;
        const why = impossibleScore(m, v, task.scoreRanges);
        if (why && !impossible.includes(why)) impossible.push(why);
      }
  out.push({
    probe: "score range",
    group: "metric",
    verdict: impossible.length > 0 ? "flagged" : "ok",
    critical: impossible.length > 0,
    evidence:
      impossible.length > 0
        ? impossible.join("; ")
        : "every score seen is inside its metric's range (the task's score_ranges, else by name)",
  });
  return out;
}

/** Whether the task YAML itself declares the metric's direction (air's `metric_directions` key). */
function yamlDeclares(facts: TaskFacts, metric: string): boolean {
  return lookupMetric(facts.declaredDirections, metric) !== undefined;
}
