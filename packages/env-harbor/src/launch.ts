import { resolve } from "node:path";
import type { CheckResult, LaunchHooks } from "@air/core";
import { dockerReachable } from "@air/sandbox";
import type { HarborConfig } from "./config.ts";
import { DockerHarborRuntime } from "./docker-runtime.ts";
import { localPlan } from "./local-plan.ts";
import { HarborTaskError } from "./task.ts";
import { loadHarborTaskSet } from "./task-set.ts";

/**
 * Checks before a run (`rl check`, and `rl` before it starts): every task folder is read (task.toml,
 * instruction.md, tests/test.sh, environment/), and for docker each task's image is built (cached by content
 * hash, so only the first check pays) or, for local, each task is checked to need no build. One result per
 * task; a task that cannot run fails unless `skip_invalid_tasks`, which reports it as `skip`.
 * @example await harborPreflight(config, { configDir, runDir }) // [{ name: "harbor task hello-file", status: "ok", ... }]
 */
export async function harborPreflight(
  config: HarborConfig,
  ctx: { configDir: string; runDir: string },
): Promise<CheckResult[]> {
  const dataset = resolve(ctx.configDir, config.dataset);
  const bad = config.skip_invalid_tasks ? "skip" : "fail";
  const names = config.tasks ? [...new Set([...config.tasks, ...(config.eval_tasks ?? [])])] : undefined;
  let set: Awaited<ReturnType<typeof loadHarborTaskSet>>;
  try {
    set = await loadHarborTaskSet(dataset, { names, skipInvalid: true });
  } catch (error) {
    return [{ name: "harbor dataset", status: "fail", message: (error as Error).message }];
  }
  const out: CheckResult[] = set.skipped.map((e) => ({
    name: `harbor task ${e.folder.split("/").pop()}`,
    status: bad,
    message: e.message,
  }));
  if (config.runtime === "docker" && !(await dockerReachable(undefined, 5000)))
    return [...out, { name: "harbor docker", status: "fail", message: "no docker engine answers" }];
  const runtime =
    config.runtime === "docker"
      ? new DockerHarborRuntime({
          runName: ctx.runDir,
          baseImages: config.base_images,
          allowInternet: false,
          pidsLimit: 16,
        })
      : undefined;
  for (const task of set.tasks.values()) {
    const name = `harbor task ${task.name}`;
    try {
      if (runtime) {
        await runtime.prepare(task);
        out.push({ name, status: "ok", message: `image ${(await runtime.plan(task)).image}` });
      } else {
        const plan = await localPlan(task, config.base_images);
        if (!plan.ok) throw new HarborTaskError(task.dir, "environment/Dockerfile", plan.reason);
        out.push({ name, status: "ok", message: `runs locally in ${plan.workdir}` });
      }
    } catch (error) {
      out.push({ name, status: bad, message: (error as Error).message });
    }
  }
  return out;
}

/** What the harbor env asks of the launcher: its preflight checks (images are built there, not named here). */
export const harborLaunch: LaunchHooks<HarborConfig> = {
  preflight: harborPreflight,
};
