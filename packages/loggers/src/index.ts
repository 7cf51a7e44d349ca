export { consoleHooks, consoleLogger, consoleLoggerConfig } from "./console.ts";
export { jsonlLogger, jsonlLoggerConfig } from "./jsonl.ts";
export {
  claimStepLines,
  formatEvalLine,
  formatStepLine,
  lossOf,
  type StepLineExtras,
  stepLinesOwner,
} from "./step-line.ts";
