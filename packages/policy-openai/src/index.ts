export { isContextLengthError, readCompletion } from "./completion.ts";
export {
  adminUrls,
  baseUrls,
  type LoraRoutes,
  loraRoutes,
  type OpenAIPolicyConfig,
  openaiPolicyConfig,
} from "./config.ts";
export { detectServer } from "./detect.ts";
export type { PolicyEnvironment } from "./environment.ts";
export { type HistoryOptions, processHistory } from "./history.ts";
export { kindRequestFields, type ServerInfo, type ServerKind } from "./kinds.ts";
export { tinyGguf, writeTinyGguf } from "./llama/gguf.ts";
export { formatErrorMessage, parseAction } from "./parse/action.ts";
export { type CommandSegment, splitCommands } from "./parse/shell.ts";
export { stripThink } from "./parse/think.ts";
export { default } from "./plugin.ts";
export { OpenAIPolicy } from "./policy.ts";
export { type PoolMember, ServerPool } from "./pool.ts";
export { probeServer } from "./probe.ts";
export type { PolicyStats } from "./stats.ts";
export { adapterName, loadWeights, unloadAdapter } from "./weights.ts";
