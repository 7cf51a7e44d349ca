export { BUILTIN_PLUGINS, builtinRegistry } from "./builtins.ts";
export type { CheckResult } from "./check-result.ts";
export { type CleanReport, cleanOutputDir } from "./clean.ts";
export {
  checkCommand,
  cleanCommand,
  reportConfigError,
  resolveConfig,
  validateCommand,
} from "./cli.ts";
export { inferenceChild, trainerChild } from "./commands.ts";
export {
  dockerReachable,
  MANAGED_LABEL,
  RUN_LABEL,
  removeRunContainers,
  runContainers,
} from "./containers.ts";
export { type GpuInfo, type GpuMap, queryGpuProcesses, queryGpus, resolveGpuMap } from "./gpus.ts";
export { EXIT, type LaunchOptions, type LaunchResult, launchRun } from "./launch.ts";
export { formatChecks, portFree, runPreflight } from "./preflight.ts";
export { descendants, isAlive, type ProcInfo, processesWithEnv } from "./proc.ts";
export { type PidFile, type Progress, RUN_FILES, readLastCompletedStep, readPidFile } from "./rundir.ts";
export { LAUNCHER_SECTIONS, type RunConfig } from "./sections.ts";
export { type ChildSpec, RUN_MARKER, type Supervised, Supervisor } from "./supervisor.ts";
export { inferenceBaseUrl } from "./urls.ts";
