import Docker from "dockerode";

/** Labels every container of a run carries (set by the mlgym env): `air.run` is the absolute run dir, unique to the run (names repeat). */
export const RUN_LABEL = "air.run";
export const MANAGED_LABEL = "air.managed";

/** A docker client from DOCKER_HOST or the default socket. */
export function dockerClient(): Docker {
  return new Docker();
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer after ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Resolves true when the docker engine answers a ping within `timeoutMs`. */
export async function dockerReachable(docker = dockerClient(), timeoutMs = 3000): Promise<boolean> {
  try {
    await withTimeout(docker.ping(), timeoutMs, "docker ping");
    return true;
  } catch {
    return false;
  }
}

/** Ids of containers (running or not) labelled `air.run=<run dir>` and `air.managed=true`. */
export async function runContainers(
  runDir: string,
  docker = dockerClient(),
  timeoutMs = 10_000,
): Promise<string[]> {
  const list = await withTimeout(
    docker.listContainers({
      all: true,
      filters: { label: [`${RUN_LABEL}=${runDir}`, `${MANAGED_LABEL}=true`] },
    }),
    timeoutMs,
    "docker list containers",
  );
  return list.map((c) => c.Id);
}

/**
 * Force-removes every container of a run, found by label (never by name). Returns the removed ids;
 * does nothing when no engine is reachable.
 * @example await removeRunContainers("/abs/outputs/debug") // ["3f2a..."]
 */
export async function removeRunContainers(runDir: string, docker = dockerClient()): Promise<string[]> {
  if (!(await dockerReachable(docker))) return [];
  const ids = await runContainers(runDir, docker);
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

/** True when `image` exists locally. */
export async function imagePresent(image: string, docker = dockerClient()): Promise<boolean> {
  try {
    await withTimeout(docker.getImage(image).inspect(), 10_000, `inspect ${image}`);
    return true;
  } catch {
    return false;
  }
}
