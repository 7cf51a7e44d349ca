export {
  aggregateAttempts,
  bestOf,
  priorityDirection,
  type RunAttempts,
  runAttempts,
  type TaskAttempts,
} from "./attempts.ts";
export {
  BASELINE_METHOD,
  type PerformanceProfile,
  type ProfileOptions,
  performanceProfile,
  type TaskRatios,
  type TaskScores,
  taskRatios,
} from "./aup.ts";
export { type Comparison, compareSummaries, type NamedSummary } from "./compare.ts";
export { type EvalRolloutParts, runEvalRollouts } from "./driver.ts";
export {
  EVALUATION_SCHEMA_VERSION,
  type EvaluationOptions,
  type EvaluationReport,
  evaluateConfig,
  runEvaluation,
} from "./evaluate.ts";
export { defaultKs, type ExampleOutcome, meanPassAtK, passAtK } from "./pass-at-k.ts";
export {
  type CorrectnessJudge,
  type EvaluationSummary,
  formatSummary,
  summarizeRollouts,
  type TaskFigures,
} from "./report.ts";
export { type EvalConfig, evalSection } from "./schema.ts";
export { evaluationRows } from "./store.ts";
export { formatTable } from "./table.ts";
