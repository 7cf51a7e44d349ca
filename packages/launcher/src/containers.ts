import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PluginNeeds } from "@air/core";
import {
  dockerClient,
  dockerClientFor,
  dockerReachable,
  labelledContainers,
  removeContainersByLabel,
  withTimeout,
} from "@air/sandbox";
import type Docker from "dockerode";

/** Labels every container of a run carries (set by its runtime, `@air/sandbox`): `air.run` is the absolute run dir. */
export { dockerClient, dockerReachable, MANAGED_LABEL, RUN_LABEL } from "@air/sandbox";

/**
 * Ids of containers (running or not) labelled `air.run=<run dir>` and `air.managed=true`.
 * @example await runContainers("/abs/outputs/debug") // ["3f2a..."]
 */
export async function runContainers(
  runDir: string,
  docker = dockerClient(),
  timeoutMs = 10_000,
): Promise<string[]> {
  return labelledContainers(docker, runDir, timeoutMs);
}

/** Docker hosts a plugin creates containers on (`PluginNeeds.dockerHosts`). */
export type DockerHostRef = NonNullable<PluginNeeds["dockerHosts"]>[number];

/** `<runDir>/docker-hosts.json`: the run's other Docker hosts, written at start so the reaper and `rl clean` find them. */
export const DOCKER_HOSTS_FILE = "docker-hosts.json";

/** Records the run's Docker hosts (nothing when there are none). */
export function writeDockerHosts(runDir: string, hosts: DockerHostRef[]): void {
  if (hosts.length > 0) writeFileSync(join(runDir, DOCKER_HOSTS_FILE), `${JSON.stringify(hosts, null, 2)}\n`);
}

/** The run's Docker hosts from `docker-hosts.json` ([] when absent or unreadable). */
export function readDockerHosts(runDir: string): DockerHostRef[] {
  const file = join(runDir, DOCKER_HOSTS_FILE);
  if (!existsSync(file)) return [];
  try {
    const list: unknown = JSON.parse(readFileSync(file, "utf8"));
    return Array.isArray(list) ? list.filter((h): h is DockerHostRef => typeof h?.url === "string") : [];
  } catch {
    return [];
  }
}

/**
 * Force-removes every container of a run, found by label (never by name), in the default engine and on every
 * Docker host recorded in the run's `docker-hosts.json`. Returns the removed ids; an engine that does not
 * answer is skipped.
 * @example await removeRunContainers("/abs/outputs/debug") // ["3f2a..."]
 */
export async function removeRunContainers(runDir: string, docker?: Docker): Promise<string[]> {
  if (docker) return await removeFrom(runDir, docker);
  return (await sweepRunContainers(runDir)).removed;
}

/** What a sweep of a run's containers did: the ids removed, and the engines it could not ask (down, or failing). */
export interface ContainerSweep {
  removed: string[];
  /** "the default engine" or a host's URL, with the reason. */
  unreachable: string[];
}

/**
 * Removes every container of a run, by label, in the default engine and on every host of `docker-hosts.json`, and
 * says which engines did not answer (or failed the removal): their containers are still there.
 * @example const { removed, unreachable } = await sweepRunContainers("/abs/outputs/debug");
 */
export async function sweepRunContainers(runDir: string): Promise<ContainerSweep> {
  const engines: Array<{ name: string; docker?: Docker; error?: string }> = [
    { name: "the default engine", docker: dockerClient() },
  ];
  for (const host of readDockerHosts(runDir)) {
    try {
      engines.push({ name: host.url, docker: dockerClientFor(host) });
    } catch (error) {
      engines.push({ name: host.url, error: `unreadable TLS files: ${String(error)}` });
    }
  }
  const removed = new Set<string>();
  const unreachable: string[] = [];
  await Promise.all(
    engines.map(async (e) => {
      if (!e.docker) return void unreachable.push(`${e.name} (${e.error})`);
      if (!(await dockerReachable(e.docker))) return void unreachable.push(`${e.name} (no answer)`);
      try {
        for (const id of await removeFrom(runDir, e.docker)) removed.add(id);
      } catch (error) {
        unreachable.push(`${e.name} (${String(error)})`);
      }
    }),
  );
  return { removed: [...removed], unreachable };
}

async function removeFrom(runDir: string, docker: Docker): Promise<string[]> {
  if (!(await dockerReachable(docker))) return [];
  return removeContainersByLabel(docker, runDir);
}

/** True when `image` exists locally. */
export async function imagePresent(image: string, docker = dockerClient()): Promise<boolean> {
  try {
    await withTimeout(docker.getImage(image).inspect(), 10_000, `inspect ${image}`);
    return true;
  } catch {
    return false;
  }
}
