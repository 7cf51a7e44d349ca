export { REPLAY_USAGE, replayMain } from "./cli.ts";
export { type Divergence, firstDivergence, spread } from "./diverge.ts";
export { formatReplay } from "./format.ts";
export { type ReplayOptions, type ReplayReport, type ReplayRun, replayTrajectory } from "./replay.ts";
export { replayRunner } from "./runner.ts";
export {
  loadReplayTarget,
  ReplayInputError,
  type ReplayStep,
  type ReplayTarget,
  type SavedRunConfig,
} from "./target.ts";
