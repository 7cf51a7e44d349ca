export { FLAT_REWARD_METRICS, type FlatRewardRow, flatRewardRows } from "./flat.ts";
export { type GroupNodeRow, groupNodes, type StoredParent, treeGroupIds } from "./groups.ts";
export {
  getRun,
  type LiveStatus,
  listRuns,
  liveStatus,
  type RunListRow,
  type RunRecord,
  runStatus,
  STALE_MS,
  type StatusTally,
} from "./runs.ts";
export { type EvalRolloutRow, evalRollouts, metricNames, metricRows, passAtK, stepRows } from "./series.ts";
export { systemState } from "./system.ts";
export { storedEvaluations } from "./tasks.ts";
export {
  advantagePercentiles,
  improvementPoints,
  type TaskSummaryRow,
  taskScoresPerStep,
  taskSummary,
  trajectoryStepStats,
  turnErrorsPerStep,
} from "./totals.ts";
export {
  listTrajectories,
  SEARCH_INDEX_CAP,
  type TrajectoryFilter,
  type TrajectoryListRow,
} from "./trajectories.ts";
