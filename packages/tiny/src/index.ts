export { type TinyConfig, type TinyConfigInput, tinyConfigSchema, tinySectionSchema } from "./config.ts";
export { startTiny, type TinyProcess } from "./process.ts";
export {
  TINY_PYTHON,
  TINY_SERVER_SCRIPT,
  TINY_TRAINER_SCRIPT,
  tinyArgv,
  writeTinyConfig,
} from "./scripts.ts";
