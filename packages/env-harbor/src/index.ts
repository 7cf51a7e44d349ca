export { type HarborConfig, harborConfigSchema } from "./config.ts";
export { baseImagesOf, harborLaunch, harborPreflight } from "./launch.ts";
export { localPlan } from "./local-plan.ts";
export { createHarborEnvironment, harborPlugin } from "./plugin.ts";
export { readRewardFiles } from "./reward.ts";
export { HarborSandboxes, harborHostSpecs, harborRuntime } from "./sandboxes.ts";
export { HarborSession, harborSystemPrompt, SUBMIT, type VerifierRun } from "./session.ts";
export { HARBOR_PATHS, type HarborTask, HarborTaskError, loadHarborTask } from "./task.ts";
export { type HarborTaskConfig, harborTaskConfigSchema } from "./task-config.ts";
export { type HarborTaskSet, loadHarborTaskSet } from "./task-set.ts";

import { harborPlugin } from "./plugin.ts";
export default harborPlugin;
