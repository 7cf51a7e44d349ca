export { type TinyConfig, type TinyConfigInput, tinyConfigSchema } from "./config.ts";
export { startTiny, type TinyProcess } from "./process.ts";
export {
  TINY_PY_DIR,
  TINY_PYTHON,
  TINY_SERVER_SCRIPT,
  TINY_TRAINER_SCRIPT,
  tinyArgv,
  tinyFiles,
  writeTinyConfig,
} from "./scripts.ts";
