import type { CheckResult, LaunchContext, LaunchHooks } from "@air/core";
import { checkTasks } from "./checks.ts";
import type { MlgymConfig } from "./config.ts";

/**
 * Checks before a run (`rl validate`, `rl check`): `checkTasks` — the MLGym root, every task's YAML, data,
 * starter and evaluation files, baseline scores, and for the local runtime that bubblewrap starts a sandbox.
 * @example await mlgymPreflight(config, { configDir, runDir }) // [{ name: "MLGym root", status: "ok", ... }, ...]
 */
export function mlgymPreflight(config: MlgymConfig, ctx: LaunchContext): Promise<CheckResult[]> {
  return checkTasks(config, ctx.configDir);
}

/**
 * What the mlgym env asks of the launcher: its preflight checks, and the docker image its containers run
 * (for the docker runtime).
 */
export const mlgymLaunch: LaunchHooks<MlgymConfig> = {
  preflight: mlgymPreflight,
  needs: (config) => (config.runtime === "docker" ? { dockerImages: [config.docker.image] } : {}),
};
