export { consoleHooks, consoleLogger, consoleLoggerConfig } from "./console.ts";
export { jsonlLogger, jsonlLoggerConfig } from "./jsonl.ts";
export { createProgressView, type ProgressOptions, type ProgressView } from "./progress.ts";
export { formatEvalLine, formatStepLine, lossOf, type StepLineExtras } from "./step-line.ts";
export { stepLineLogger, stepLineLoggerConfig } from "./step-line-logger.ts";
