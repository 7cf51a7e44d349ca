import {
  advantagePercentiles,
  evalRollouts,
  improvementPoints,
  listRuns,
  metricRows,
  passAtK,
  type RunRecord,
  readEvaluationNoise,
  type StoreDb,
  stepRows,
  type TaskSummaryRow,
  taskScoresPerStep,
  trajectoryStepStats,
  turnErrorsPerStep,
} from "@air/logger-sqlite/read";
import { type Heatmap, type Point, passAtKOverSteps, percentileHeatmap } from "./derived.ts";

export type RunRow = RunRecord;
export type { Point };

function push(out: Record<string, Point[]>, name: string, x: number, y: number | null | undefined) {
  if (y === null || y === undefined || !Number.isFinite(y)) return;
  const list = out[name] ?? [];
  list.push([x, y]);
  out[name] = list;
}

/** What `/api/runs/:run/series` serves: every line series and the advantage heatmap. */
export interface RunCharts {
  series: Record<string, Point[]>;
  heatmap: Heatmap;
}

/**
 * Every chart of a run: `runSeries` and the advantage distribution per step (`percentileHeatmap` of the
 * stored per-step advantage percentiles).
 * @example const { series, heatmap } = runCharts(db, 1);
 */
export function runCharts(db: StoreDb, runId: number): RunCharts {
  const percentiles = advantagePercentiles(db, runId);
  return { series: runSeries(db, runId, percentiles), heatmap: percentileHeatmap(percentiles) };
}

/**
 * Every line series of a run, keyed by name: stored metrics (trainer ones prefixed `trainer/`) and series
 * derived from trajectories, turns, samples, steps and evaluations (prefixed `derived/`, `task/`, `pass@k/`;
 * `pass@<k>` over training steps from the periodic evaluations).
 */
export function runSeries(
  db: StoreDb,
  runId: number,
  advantages?: Map<number, { n: number; q: number[] }>,
): Record<string, Point[]> {
  const out: Record<string, Point[]> = {};
  const stepMetrics = new Map<number, Record<string, number>>();
  for (const r of metricRows(db, runId)) {
    push(out, r.source === "trainer" ? `trainer/${r.name}` : r.name, r.step, r.value);
    if (r.source !== "step") continue;
    const m = stepMetrics.get(r.step) ?? {};
    m[r.name] = r.value;
    stepMetrics.set(r.step, m);
  }
  for (const [step, m] of stepMetrics) {
    const seconds = m["time/step_s"];
    const tokens = m["batch/tokens"];
    if (seconds && tokens !== undefined) push(out, "derived/tokens_per_s", step, tokens / seconds);
    if (m["batch/samples"]) push(out, "derived/sample_tokens_mean", step, (tokens ?? 0) / m["batch/samples"]);
  }
  for (const r of trajectoryStepStats(db, runId)) {
    push(out, "derived/validate_rate", r.step, r.validateRate);
    push(out, "derived/failed_rollouts", r.step, r.failed);
    if (r.count > 0) push(out, "derived/failed_frac", r.step, (r.failed ?? 0) / r.count);
  }
  for (const r of turnErrorsPerStep(db, runId)) {
    push(out, "derived/parse_errors", r.step, r.parse);
    push(out, "derived/tool_errors", r.step, r.tool);
    push(out, "derived/evaluation_errors", r.step, r.evaluation);
    push(out, "derived/timeouts", r.step, r.timeouts);
  }
  // The audit's evaluation noise (std of repeated baseline scores), drawn as a band of ± 1 std around the baseline.
  const noise = readEvaluationNoise(db);
  for (const r of taskScoresPerStep(db, runId)) {
    push(out, `task/${r.task}/final_score`, r.step, r.finalScore);
    push(out, `task/${r.task}/baseline`, r.step, r.baselineScore);
    const std = noise[r.task];
    if (std === undefined || std <= 0 || r.baselineScore === null) continue;
    push(out, `task/${r.task}/noise_high`, r.step, r.baselineScore + std);
    push(out, `task/${r.task}/noise_low`, r.step, r.baselineScore - std);
  }
  let previousEnd: number | null = null;
  for (const s of stepRows(db, runId)) {
    if (s.endedAt === null) continue;
    const begin = previousEnd ?? s.startedAt;
    if (begin !== null && s.endedAt > begin && s.turnCount !== null)
      push(out, "derived/turns_per_s", s.step, (s.turnCount * 1000) / (s.endedAt - begin));
    previousEnd = s.endedAt;
  }
  const byStep = advantages ?? advantagePercentiles(db, runId);
  for (const [step, { q }] of [...byStep.entries()].sort((a, b) => a[0] - b[0]))
    for (const k of [10, 50, 90]) push(out, `derived/advantage_p${k}`, step, q[k]);
  for (const [name, points] of Object.entries(passAtKOverSteps(evalRollouts(db, runId))))
    for (const [x, y] of points) push(out, `eval/${name}`, x, y);
  out["derived/improvement_per_episode"] = improvementPoints(db, runId, 1000);
  for (const r of passAtK(db, runId)) {
    const k = Number(r.metric.slice(5));
    if (Number.isFinite(k)) push(out, `pass@k/${r.who}`, k, r.value);
  }
  for (const list of Object.values(out)) list.sort((a, b) => a[0] - b[0]);
  return out;
}

/** `/api/runs`: every run with the snake_case keys the endpoint has always served. */
export function runsJson(db: StoreDb) {
  return listRuns(db).map((r) => ({
    id: r.id,
    name: r.name,
    run_dir: r.runDir,
    config_json: r.configJson,
    status: r.status,
    error: r.error,
    source: r.source,
    started_at: r.startedAt,
    ended_at: r.endedAt,
    step_count: r.stepCount,
    trajectory_count: r.trajectoryCount,
    last_reward: r.lastReward,
  }));
}

/** `/api/runs/:run/tasks`: the per-task summary with the endpoint's snake_case keys. */
export function tasksJson(rows: TaskSummaryRow[]) {
  return rows.map((r) => ({
    task: r.task,
    episodes: r.episodes,
    baseline: r.baseline,
    avg_final: r.avgFinal,
    best_final: r.bestFinal,
    avg_improvement: r.avgImprovement,
    best_improvement: r.bestImprovement,
    validate_rate: r.validateRate,
    avg_reward: r.avgReward,
  }));
}
