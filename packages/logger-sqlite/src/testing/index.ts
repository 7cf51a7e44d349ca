export { KILL_CHILD, runAndKill } from "./kill.ts";
export { type FixtureRunOptions, fixtureRegistry, runFixture, XSS_PAYLOAD } from "./run.ts";
export {
  scanEpisodeImprovements,
  scanSampleAdvantages,
  scanTaskScoresPerStep,
  scanTaskSummary,
  scanTrajectoryStepStats,
  scanTurnErrorsPerStep,
} from "./scan.ts";
