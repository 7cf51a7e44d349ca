import type { CheckResult, LaunchContext, LaunchHooks } from "@air/core";
import { checkTasks } from "./checks.ts";
import type { MlgymConfig } from "./config.ts";
import { checkDockerHosts, hostSpecs } from "./hosts.ts";

/**
 * Checks before a run (`rl validate`, `rl check`): `checkTasks` — the MLGym root, every task's YAML, data,
 * starter and evaluation files, baseline scores, and for the local runtime that bubblewrap starts a sandbox —
 * and, with `[env.docker] hosts`, that every host answers and has the image (`checkDockerHosts`).
 * @example await mlgymPreflight(config, { configDir, runDir }) // [{ name: "MLGym root", status: "ok", ... }, ...]
 */
export async function mlgymPreflight(config: MlgymConfig, ctx: LaunchContext): Promise<CheckResult[]> {
  const [tasks, hosts] = await Promise.all([
    checkTasks(config, ctx.configDir, ctx.audit),
    checkDockerHosts(config, ctx.configDir),
  ]);
  return [...tasks, ...hosts];
}

/**
 * What the mlgym env asks of the launcher: its preflight checks, and the docker image its containers run (the
 * default engine), or the docker hosts whose labelled containers the launcher removes at teardown.
 */
export const mlgymLaunch: LaunchHooks<MlgymConfig> = {
  preflight: mlgymPreflight,
  tasks: (config, ctx) => checkTasks(config, ctx.configDir, ctx.audit, true),
  needs: (config, ctx) => {
    if (config.runtime !== "docker") return {};
    // with hosts, images are checked on each host by the preflight above, not in the launcher's engine
    if (config.docker.hosts.length === 0) return { dockerImages: [config.docker.image] };
    return {
      dockerHosts: hostSpecs(config, ctx.configDir).map(({ url, tls }) => (tls ? { url, tls } : { url })),
    };
  },
};
