/**
 * `@air/core/testing`: what tests need to drive air's real loop without servers, containers or GPUs —
 * builders for turns, trajectories, samples and groups, the seeded RNG, in-memory plugins, `runToml` and `freePort`.
 * Only for tests and benchmarks; production code imports `@air/core`.
 * @example
 * import { makeTrajectory, makeTurn, runToml, seededRandom } from "@air/core/testing";
 */
export { seededRandom } from "../random.ts";
export { makeGroup, makeSample, makeTrajectory, makeTurn, turnSample } from "./builders.ts";
export { makeContext } from "./context.ts";
export * from "./plugins/index.ts";
export { freePort } from "./ports.ts";
export { type EventRecord, eventRecorder } from "./record.ts";
export { type LogLine, type RecordedRun, type RunConfigInput, type RunTomlOptions, runToml } from "./run.ts";
