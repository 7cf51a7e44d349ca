import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { CheckResult, LaunchHooks } from "@air/core";
import { baseImagesOf as dockerfileBases, dockerReachable } from "@air/sandbox";
import TOML from "@iarna/toml";
import type { HarborConfig } from "./config.ts";
import { HarborSandboxes, harborHostSpecs, harborRuntime } from "./sandboxes.ts";
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
  const hosts = config.docker.hosts.length > 0;
  if (config.runtime === "docker" && !hosts && !(await dockerReachable(undefined, 5000)))
    return [...out, { name: "harbor docker", status: "fail", message: "no docker engine answers" }];
  const root = mkdtempSync(join(tmpdir(), "air-harbor-check-"));
  const runtime = harborRuntime(config, { configDir: ctx.configDir, runName: ctx.runDir, root });
  const boxes = new HarborSandboxes(runtime, config, root);
  try {
    for (const task of set.tasks.values()) {
      const name = `harbor task ${task.name}`;
      try {
        out.push({ name, status: "ok", message: await boxes.prepare(task) });
      } catch (error) {
        out.push({ name, status: bad, message: (error as Error).message });
      }
    }
  } finally {
    await boxes.close();
    rmSync(root, { recursive: true, force: true });
  }
  return out;
}

/**
 * The images a dataset's tasks start from (docker): every `FROM` of each task's Dockerfile that is not an earlier
 * stage, and each prebuilt `docker_image`, after `base_images`. The launcher checks they are in the engine's
 * store (images are never pulled) and, because the run uses docker, sweeps its containers at teardown. Folders
 * that cannot be read are left to the preflight, which names them.
 * @example baseImagesOf(config, "/repo/configs/harbor") // ["air-mlgym-test:latest"]
 */
export function baseImagesOf(config: HarborConfig, configDir: string): string[] {
  const root = resolve(configDir, config.dataset);
  const images = new Set<string>();
  let names: string[] = [];
  try {
    names = config.tasks
      ? [...config.tasks, ...(config.eval_tasks ?? [])]
      : readdirSync(root, { withFileTypes: true })
          .filter((e) => e.isDirectory() && !e.name.startsWith("."))
          .map((e) => e.name);
  } catch {
    return [];
  }
  const mapped = (image: string) => config.base_images[image] ?? image;
  for (const name of names) {
    const dockerfile = join(root, name, "environment", "Dockerfile");
    if (existsSync(dockerfile)) {
      for (const image of dockerfileBases(readFileSync(dockerfile, "utf8"))) images.add(mapped(image));
      continue;
    }
    try {
      const toml = TOML.parse(readFileSync(join(root, name, "task.toml"), "utf8")) as {
        environment?: { docker_image?: unknown };
      };
      const image = toml.environment?.docker_image;
      if (typeof image === "string") images.add(mapped(image));
    } catch {
      // the preflight reports the folder
    }
  }
  return [...images].sort();
}

/**
 * `rl validate`: every task folder of the dataset read (task.toml, instruction.md, tests/test.sh, environment/),
 * nothing built; a folder that cannot be read fails (or is a `skip` with `skip_invalid_tasks`); a dataset dir
 * that is not on this machine is one `skip`.
 * @example await harborTasks(config, { configDir, runDir }) // [{ name: "harbor task hello-file", status: "ok", ... }]
 */
export async function harborTasks(
  config: HarborConfig,
  ctx: { configDir: string; runDir: string },
): Promise<CheckResult[]> {
  const dataset = resolve(ctx.configDir, config.dataset);
  if (!existsSync(dataset))
    return [
      {
        name: "harbor tasks",
        status: "skip",
        message: `not loaded: the dataset ${dataset} (env.dataset = "${config.dataset}") is not on this machine`,
      },
    ];
  const names = config.tasks ? [...new Set([...config.tasks, ...(config.eval_tasks ?? [])])] : undefined;
  try {
    const set = await loadHarborTaskSet(dataset, { names, skipInvalid: true });
    return [
      ...set.skipped.map((e) => ({
        name: `harbor task ${e.folder.split("/").pop()}`,
        status: config.skip_invalid_tasks ? ("skip" as const) : ("fail" as const),
        message: e.message,
      })),
      ...[...set.tasks.values()].map((t) => ({
        name: `harbor task ${t.name}`,
        status: "ok" as const,
        message: t.dir,
      })),
    ];
  } catch (error) {
    return [{ name: "harbor dataset", status: "fail", message: (error as Error).message }];
  }
}

/** What the harbor env asks of the launcher: its preflight checks, and (docker) the base images its tasks start from. */
export const harborLaunch: LaunchHooks<HarborConfig> = {
  preflight: harborPreflight,
  tasks: harborTasks,
  needs: (config, ctx) => {
    if (config.runtime !== "docker") return {};
    if (config.docker.hosts.length === 0)
      return { dockerImages: baseImagesOf(config, ctx.configDir), dockerImagesKey: "[env] base_images" };
    // with hosts, the preflight builds every image on every host (from base images that must be there)
    return {
      dockerHosts: harborHostSpecs(config, ctx.configDir).map(({ url, tls }) =>
        tls ? { url, tls } : { url },
      ),
    };
  },
};
