/**
 * @air/sandbox: isolated places where an agent's commands run, behind one contract (`Runtime`, `Sandbox` in
 * types.ts) that any env uses — bubblewrap on this machine (`LocalRuntime`), plain directories
 * (`UnsandboxedRuntime`, no isolation), one Docker engine (`DockerRuntime`) or many Docker hosts with placement
 * and draining (`DockerHostsRuntime`); plus the one Docker client factory and teardown by label.
 */
export {
  assertBwrapWorks,
  type BwrapSpec,
  bwrapArgv,
  bwrapInvocation,
  bwrapProblem,
  interpreterPaths,
  passwdFor,
  SANDBOX_HOME,
  SANDBOX_UID,
  SANDBOX_WORKSPACE,
  sandboxEnv,
} from "./bwrap.ts";
export { DockerRuntime } from "./docker.ts";
export {
  type DockerEndpoint,
  dockerClient,
  dockerClientFor,
  dockerReachable,
  pingDocker,
  withTimeout,
} from "./docker-client.ts";
export { DockerHostsRuntime } from "./docker-hosts.ts";
export type { DockerHostSpec, DockerHostsOptions, HostState } from "./docker-hosts-types.ts";
export type { DockerRuntimeOptions } from "./docker-options.ts";
export { type ContainerShell, openContainerShell } from "./docker-shell.ts";
export { forkSandbox } from "./fork-sandbox.ts";
export {
  baseImagesOf,
  ensureImage,
  hashDir,
  type ImageBuild,
  ImageBuildError,
  imageTag,
  mapBaseImages,
} from "./image-build.ts";
export { LocalRuntime, type LocalRuntimeOptions } from "./local.ts";
export { UnsandboxedRuntime, type UnsandboxedRuntimeOptions } from "./local-none.ts";
export {
  chownTree,
  killGroup,
  type ProcessOutput,
  removeTree,
  runProcess,
  startBwrapShell,
  writeFd3,
} from "./process.ts";
export {
  execWithTimeout,
  SentinelShell,
  SHELL_RESTARTED,
  type ShellRecovery,
  type ShellResult,
  shellQuote,
} from "./shell.ts";
export { applyExports, carryExports, parseExports, readExports } from "./shell-exports.ts";
export {
  dropRollout,
  ofRollout,
  rolloutStates,
  type SessionSnapshots,
  saveTurn,
  snapshotHandleSchema,
  snapshotId,
} from "./snapshot-rollout.ts";
export { SnapshotStore, SnapshotUnavailableError, sweepIncomplete } from "./snapshot-store.ts";
export { restoreShell } from "./snapshot-tar.ts";
export {
  containerLabels,
  labelledContainers,
  MANAGED_LABEL,
  ROLLOUT_LABEL,
  RUN_LABEL,
  removeContainersByLabel,
} from "./teardown.ts";
export type {
  AcquireOptions,
  EvaluationOutput,
  EvaluationRequest,
  ExecResult,
  MountedFolder,
  RunRequest,
  Runtime,
  Sandbox,
  SnapshotHandle,
  TaskEnvironment,
  TaskFiles,
  TaskImageBuild,
} from "./types.ts";
