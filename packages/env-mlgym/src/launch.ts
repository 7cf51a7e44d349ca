import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { CheckResult, LaunchContext, LaunchHooks } from "@air/core";
import type { MlgymConfig } from "./config.ts";
import { taskFile } from "./task.ts";

/** The MLGym root a config names, absolute (relative paths are relative to the TOML file). */
function mlgymRoot(config: MlgymConfig, ctx: LaunchContext): string {
  return isAbsolute(config.mlgym_root) ? config.mlgym_root : resolve(ctx.configDir, config.mlgym_root);
}

/**
 * Checks before a run: the MLGym root exists and every task (train and eval) has its YAML file.
 * @example await mlgymLaunch.preflight?.(config, { configDir, runDir }) // [{ name: "MLGym root exists", status: "ok", ... }]
 */
export function mlgymPreflight(config: MlgymConfig, ctx: LaunchContext): CheckResult[] {
  const root = mlgymRoot(config, ctx);
  if (!existsSync(root))
    return [
      {
        name: "MLGym root exists",
        status: "fail",
        message: `${root} does not exist ([env] mlgym_root = "${config.mlgym_root}"); clone MLGym there or fix the path`,
      },
    ];
  const out: CheckResult[] = [{ name: "MLGym root exists", status: "ok", message: root }];
  for (const task of new Set([...config.tasks, ...(config.eval_tasks ?? [])])) {
    const file = taskFile(root, task);
    const name = `task file for ${task}`;
    out.push(
      existsSync(file)
        ? { name, status: "ok", message: file }
        : { name, status: "fail", message: `${file} does not exist` },
    );
  }
  return out;
}

/**
 * What the mlgym env asks of the launcher: its preflight checks, and the docker image its containers run
 * (for the docker runtime).
 */
export const mlgymLaunch: LaunchHooks<MlgymConfig> = {
  preflight: mlgymPreflight,
  needs: (config) => (config.runtime === "docker" ? { dockerImages: [config.docker.image] } : {}),
};
