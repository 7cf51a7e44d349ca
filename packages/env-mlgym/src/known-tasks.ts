import type { MetricDirection } from "@air/core";

/**
 * Metric directions of MLGym's known tasks (MLGym keeps them outside the task YAML).
 * @example KNOWN_TASK_DIRECTIONS.regressionKaggleHousePrice?.rmse // "minimize"
 */
export const KNOWN_TASK_DIRECTIONS: Record<string, Record<string, MetricDirection>> = {
  titanicSurvival: { Accuracy: "maximize", accuracy: "maximize" },
  regressionKaggleHousePrice: { rmse: "minimize", r2: "maximize" },
  regressionKaggleHousePriceL1: { rmse: "minimize", r2: "maximize" },
  battleOfSexes: { Score: "maximize" },
  prisonersDilemma: { Score: "maximize" },
  blotto: { Score: "maximize" },
  imageClassificationCifar10: { accuracy: "maximize" },
  imageClassificationCifar10L1: { accuracy: "maximize" },
  imageClassificationFMnist: { accuracy: "maximize" },
  languageModelingFineWebDir: { val_loss: "minimize" },
  rlMountainCarContinuous: { "Reward Mean": "maximize", "Reward Std": "minimize" },
  rlBreakoutMinAtar: { "Reward Mean": "maximize", "Reward Std": "minimize" },
  rlMetaMazeMisc: { "Reward Mean": "maximize", "Reward Std": "minimize" },
};

const MINIMIZE_NAME = /(^|[_\s-])(rmse|mse|mae|loss|error|perplexity|ppl|time)($|[_\s-])/i;

/**
 * Direction of `metric` in `taskId`: the task YAML's `metric_directions`, then the known-task table, then
 * the metric's name (loss, rmse, mae, error, ... minimize), else maximize.
 * @example metricDirection("regressionKaggleHousePrice", "rmse", {}) // "minimize"
 */
export function metricDirection(
  taskId: string,
  metric: string,
  declared: Record<string, MetricDirection>,
): MetricDirection {
  return (
    lookupMetric(declared, metric) ??
    lookupMetric(KNOWN_TASK_DIRECTIONS[taskId] ?? {}, metric) ??
    (MINIMIZE_NAME.test(metric) ? "minimize" : "maximize")
  );
}

/**
 * `table[metric]`, else the entry whose name equals `metric` ignoring case (MLGym's titanic YAML says
 * `Accuracy`, its evaluator prints `accuracy`).
 * @example lookupMetric({ Accuracy: "maximize" }, "accuracy") // "maximize"
 */
export function lookupMetric<T>(table: Record<string, T>, metric: string): T | undefined {
  if (metric in table) return table[metric];
  const lower = metric.toLowerCase();
  const key = Object.keys(table).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : table[key];
}

/**
 * Renames the keys of `scores` to the spelling `names` use, ignoring case (the task YAML's metric names are
 * the one key used everywhere); keys without a match are kept as printed.
 * @example canonicalScores({ accuracy: 1 }, ["Accuracy"]) // { Accuracy: 1 }
 */
export function canonicalScores(scores: Record<string, number>, names: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(scores)) {
    const lower = key.toLowerCase();
    out[names.find((n) => n === key) ?? names.find((n) => n.toLowerCase() === lower) ?? key] = value;
  }
  return out;
}

/**
 * Score bounds of MLGym's known games, from their payoff structure: battleOfSexes pays the row player 0, 1 or 2
 * per round, prisonersDilemma 0, 1, 3 or 5, blotto −1, 0 or 1 per game; the Score is a mean of those. Used
 * when the task YAML has no `score_ranges`.
 * @example KNOWN_TASK_SCORE_RANGES.blotto?.Score // { min: -1, max: 1 }
 */
export const KNOWN_TASK_SCORE_RANGES: Record<string, Record<string, { min?: number; max?: number }>> = {
  battleOfSexes: { Score: { min: 0, max: 2 } },
  prisonersDilemma: { Score: { min: 0, max: 5 } },
  blotto: { Score: { min: -1, max: 1 } },
};

/**
 * Evaluation-only files of MLGym's known tasks (relative to the MLGym root), used when the task YAML lists
 * no `secret_files`: the ground truth of the CSV tasks. Entries that do not exist on disk are skipped.
 * @example KNOWN_TASK_SECRET_FILES.titanicSurvival // ["data/titanic/data/ground_truth.csv"]
 */
export const KNOWN_TASK_SECRET_FILES: Record<string, string[]> = {
  titanicSurvival: ["data/titanic/data/ground_truth.csv"],
  regressionKaggleHousePrice: ["data/regressionKaggleHousePrice/data/answer.csv"],
  regressionKaggleHousePriceL1: ["data/regressionKaggleHousePrice/data/answer.csv"],
};

/**
 * Workspace files of MLGym's known tasks that the agent may read (upstream ships them as starter code) but
 * whose pristine copy replaces the agent's at evaluation: the games' opponent `target.py`, which their
 * evaluators import. Used when the task YAML lists no `pristine_files`.
 * @example KNOWN_TASK_PRISTINE_FILES.blotto // ["target.py"]
 */
export const KNOWN_TASK_PRISTINE_FILES: Record<string, string[]> = {
  battleOfSexes: ["target.py"],
  prisonersDilemma: ["target.py"],
  blotto: ["target.py"],
};
