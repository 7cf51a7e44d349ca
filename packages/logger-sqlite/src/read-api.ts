import { type OpenStoreOptions, openStore, type StoreDb } from "./open.ts";

/**
 * The store's read API (`@air/logger-sqlite/read`): what a reader such as the dashboard may use. Nothing here
 * writes rows; `openStoreReadOnly` opens the file read-only (a store written by an older air is migrated first,
 * see `openStore`).
 */
export { type AirAgentTrajectory, type AirAgentTurn, exportAirAgent } from "./air-agent.ts";
export { type AuditRow, readLatestAudits } from "./audits.ts";
export { readAuditFindings } from "./findings.ts";
export { EVALUATION_NOISE_PROBE, readEvaluationNoise } from "./noise.ts";
export type { StoreDb } from "./open.ts";
export * from "./queries/index.ts";
export {
  parseJson,
  readTrajectory,
  type StoredTrajectory,
  type StoredTurn,
  type TrajectoryRecord,
  type TurnRecord,
} from "./read.ts";
export { SEARCH_SUFFIX, type SearchHits, SearchIndex, trigramQuery } from "./search.ts";
export { runStoreFile } from "./store-file.ts";
export type { ValidationPoint } from "./summary.ts";

/**
 * Opens a run store read-only (the file must exist and be an air store).
 * @example const db = openStoreReadOnly("outputs/run/air.db"); db.$client.close();
 */
export function openStoreReadOnly(path: string, options: Omit<OpenStoreOptions, "readonly"> = {}): StoreDb {
  return openStore(path, { ...options, readonly: true });
}
