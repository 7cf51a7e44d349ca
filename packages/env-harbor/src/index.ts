export { type HarborConfig, harborConfigSchema } from "./config.ts";
export { DockerHostsHarborRuntime, harborHostSpecs } from "./docker-hosts.ts";
export { DockerHarborRuntime } from "./docker-runtime.ts";
export { taskImage } from "./image.ts";
export { baseImagesOf, harborLaunch, harborPreflight } from "./launch.ts";
export { localPlan } from "./local-plan.ts";
export { LocalHarborRuntime } from "./local-runtime.ts";
export { createHarborEnvironment, harborPlugin } from "./plugin.ts";
export { readRewardFiles } from "./reward.ts";
export { HarborSession, harborSystemPrompt, SUBMIT } from "./session.ts";
export { HARBOR_PATHS, type HarborTask, HarborTaskError, loadHarborTask } from "./task.ts";
export { type HarborTaskConfig, harborTaskConfigSchema } from "./task-config.ts";
export { type HarborTaskSet, loadHarborTaskSet } from "./task-set.ts";
export type { CommandResult, HarborRuntime, HarborSandbox, VerifierRun } from "./types.ts";

import { harborPlugin } from "./plugin.ts";
export default harborPlugin;
