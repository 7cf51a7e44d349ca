import type Docker from "dockerode";
import { withTimeout } from "./docker-client.ts";

/** Label every container of a run carries: its run name (the launcher passes the absolute run dir, unique per run). */
export const RUN_LABEL = "air.run";
/** Label of the rollout a container was created for. */
export const ROLLOUT_LABEL = "air.rollout";
/** Label that marks a container as made by air (teardown only ever removes containers that carry it). */
export const MANAGED_LABEL = "air.managed";

/**
 * Labels of every container a runtime creates; teardown finds leftovers by them (never by name).
 * @example containerLabels("debug", "s0-r1") // { "air.run": "debug", "air.rollout": "s0-r1", "air.managed": "true" }
 */
export function containerLabels(runName: string, rolloutId: string): Record<string, string> {
  return { [RUN_LABEL]: runName, [ROLLOUT_LABEL]: rolloutId, [MANAGED_LABEL]: "true" };
}

/**
 * Ids of containers (running or not) labelled `air.run=<runName>` and `air.managed=true`.
 * @example await labelledContainers(new Docker(), "/abs/outputs/debug") // ["3f2a..."]
 */
export async function labelledContainers(
  docker: Docker,
  runName: string,
  timeoutMs = 10_000,
): Promise<string[]> {
  const list = await withTimeout(
    docker.listContainers({
      all: true,
      filters: { label: [`${RUN_LABEL}=${runName}`, `${MANAGED_LABEL}=true`] },
    }),
    timeoutMs,
    "docker list containers",
  );
  return list.map((c) => c.Id);
}

/**
 * Force-removes every container labelled `air.run=<runName>` and `air.managed=true` (with its anonymous volumes);
 * returns their ids. A container already gone (or being removed) is not an error; any other failure is thrown.
 * Every call to the engine is bounded (30 s a removal).
 * @example await removeContainersByLabel(new Docker(), "debug")
 */
export async function removeContainersByLabel(docker: Docker, runName: string): Promise<string[]> {
  const ids = await labelledContainers(docker, runName);
  await Promise.all(
    ids.map((id) =>
      withTimeout(docker.getContainer(id).remove({ force: true, v: true }), 30_000, `remove ${id}`).catch(
        (error: unknown) => {
          if (!/no such container|already in progress/i.test(String(error))) throw error;
        },
      ),
    ),
  );
  return ids;
}
