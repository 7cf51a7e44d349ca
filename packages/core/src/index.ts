export { z } from "zod";
export type { AuditFindings, CriticalFinding } from "./audit-findings.ts";
export * from "./command-step.ts";
export type {
  ExtraSectionValues,
  LoadOptions,
  ResolvedConfig,
  ResolvedPlugin,
  ResolvedReward,
} from "./config/load.ts";
export { formatIssues, loadConfig, readToml } from "./config/load.ts";
export { deepMerge, parseOverrides } from "./config/overrides.ts";
export type { OrchestratorConfig, RootConfig } from "./config/schema.ts";
export { pluginSection, rootSchema } from "./config/schema.ts";
export { AirError, type AirErrorCode, errorMessage, wrapError } from "./errors.ts";
export {
  EVENT_NAMES,
  EventBus,
  type EventHandlers,
  type EventMap,
  type EventName,
  type EventPayload,
  type HandlerRunner,
  type LogLevel,
} from "./events.ts";
export {
  type HostConfig,
  type HostContext,
  type HostedParts,
  PluginHost,
  type PluginHostOptions,
} from "./host.ts";
export * from "./launch-hooks.ts";
export { createLogger, type Logger, type LogSink, stderrSink } from "./log.ts";
export { type AttemptDeps, type AttemptInput, attemptDeps, rolloutWithRetries } from "./loop/attempt.ts";
export { buildBatch } from "./loop/batch.ts";
export { MIN_RATE_S, Orchestrator, type RunParts, type RunSummary } from "./loop/orchestrator.ts";
export {
  type EnvState,
  type JsonValue,
  type RecordedRollout,
  type ResumePoint,
  resumedMessages,
  versionsOf,
} from "./loop/resume.ts";
export { applyRewards, type RewardEntry } from "./loop/rewards.ts";
export { type RolloutDeps, type RolloutInput, runRollout } from "./loop/rollout.ts";
export { type StartRunOptions, startRun } from "./loop/run.ts";
export { addSummary, summarize } from "./loop/stats.ts";
export { TokenLog } from "./loop/tokens.ts";
export { PendingWork, Semaphore, sleep } from "./pending.ts";
export * from "./plugin.ts";
export { seededRandom } from "./random.ts";
export { type BuiltinPlugins, isPluginPath, type PluginLoader, PluginRegistry } from "./registry.ts";
export * from "./types.ts";
