export { FLAT_REWARD_METRICS, type FlatRewardRow, flatRewardRows } from "./flat.ts";
export { getRun, listRuns, type RunListRow, type RunRecord, runStatus } from "./runs.ts";
export {
  episodeImprovements,
  metricNames,
  metricRows,
  passAtK,
  sampleAdvantages,
  stepRows,
  taskScoresPerStep,
  trajectoryStepStats,
  turnErrorsPerStep,
} from "./series.ts";
export { systemState } from "./system.ts";
export { storedEvaluations, type TaskSummaryRow, taskSummary } from "./tasks.ts";
export { listTrajectories, type TrajectoryFilter, type TrajectoryListRow } from "./trajectories.ts";
