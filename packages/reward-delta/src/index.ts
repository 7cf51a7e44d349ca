import { deltaReward } from "./plugin.ts";

export { deltaRewards, tamperOf, type Warn } from "./delta.ts";
export { lookup, type ResolvedMetric, readTurnScore, resolveMetric, type TurnScore } from "./metric.ts";
export { DELTA_DEFAULTS, type DeltaConfig, deltaConfigSchema } from "./options.ts";
export { impossibleScore, type MetricRange, metricRange } from "./range.ts";
export { deltaReward };
export default deltaReward;
