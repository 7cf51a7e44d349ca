export {
  type AirAgentTrajectory,
  type AirAgentTurn,
  exportAirAgent,
  importAirAgent,
  readAirAgentFiles,
} from "./air-agent.ts";
export { AUDITS_DDL, type AuditRow, readLatestAudits, recordAudits } from "./audits.ts";
export { type EvaluationResult, recordEvaluations } from "./evaluations.ts";
export { MIGRATIONS_DIR, type OpenStoreOptions, openStore, type StoreDb } from "./open.ts";
export { type SqliteLoggerConfig, sqliteLoggerConfig } from "./options.ts";
export { default } from "./plugin.ts";
export * from "./queries/index.ts";
export {
  parseJson,
  readTrajectory,
  type StoredTrajectory,
  type StoredTurn,
  type TrajectoryRecord,
  type TurnRecord,
} from "./read.ts";
export { readRecordedRollouts } from "./recorded.ts";
export { HEARTBEAT_MS, type RecordedRunInfo, type RecorderOptions, RunRecorder } from "./recorder.ts";
export { type ContinuedRun, continueRun } from "./resume.ts";
export * as tables from "./schema.ts";
export { schema } from "./schema.ts";
export { runStoreFile, storeFileIn } from "./store-file.ts";
export {
  promptBase,
  rebuildPrompts,
  type StoredPrompt,
  summarizeTrajectory,
  type TrajectorySummary,
  tailFromPrevious,
  type ValidationPoint,
} from "./summary.ts";
export { BatchWriter, type BatchWriterOptions } from "./writer.ts";
