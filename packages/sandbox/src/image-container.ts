import { randomBytes } from "node:crypto";
import type Docker from "dockerode";
import { withTimeout } from "./docker-client.ts";
import { rootScript, tarOf } from "./docker-exec.ts";
import { shellQuote } from "./shell.ts";
import { containerLabels } from "./teardown.ts";
import type { MountedFolder } from "./types.ts";

/** How containers of one task are made: its image, WORKDIR, users, network and limits (from `TaskEnvironment`). */
export interface ImagePlan {
  image: string;
  workdir: string;
  /** The agent's user: the environment's, else the image's USER, else root. */
  user: string;
  /** The image's USER (else root): an evaluation's default user. */
  imageUser: string;
  network: "none" | "bridge";
  memoryMb: number;
  cpus: number;
  pidsLimit: number;
  /** `KEY=value` lines of the task environment. */
  env: string[];
  dirs: string[];
  runName: string;
}

/** Bound of each control call (create, start, a root command). */
export const CONTROL_TIMEOUT_MS = 60_000;

/** Where the root shell keeps a snapshot tar while it is fetched (never the agent's). */
export const PRIVATE = "/var/lib/air-image";

/** Kills every process in the container but PID 1, the keep-alive `sleep` and the shell running this. */
export function killAllScript(keep: string): string {
  return `for d in /proc/[0-9]*; do p=\${d#/proc/}; case " 1 ${keep} $$ " in *" $p "*) ;; *) kill -9 "$p" 2>/dev/null;; esac; done; true`;
}

/**
 * Host config of every sandbox container (the docker runtime's and a task image's): network, memory, cpus, a
 * pids limit, an init, no new privileges.
 * @example sandboxHostConfig({ network: "none", memoryMb: 1024, cpus: 1, pidsLimit: 256 })
 */
export function sandboxHostConfig(limits: {
  network: string;
  memoryMb: number;
  cpus: number;
  pidsLimit: number;
}): Docker.HostConfig {
  return {
    NetworkMode: limits.network,
    Memory: limits.memoryMb * 1024 * 1024,
    NanoCpus: Math.round(limits.cpus * 1e9),
    PidsLimit: limits.pidsLimit,
    Init: true,
    SecurityOpt: ["no-new-privileges"],
  };
}

/** Creates and starts a `sleep infinity` container of `image`; returns it and the keep-alive's pid. */
export async function startImageContainer(
  docker: Docker,
  plan: ImagePlan,
  image: string,
  rolloutId: string,
): Promise<{ container: Docker.Container; keep: string }> {
  const container = await withTimeout(
    docker.createContainer({
      Image: image,
      Entrypoint: [],
      Cmd: ["sleep", "infinity"],
      User: "root",
      WorkingDir: plan.workdir,
      Env: plan.env,
      Labels: containerLabels(plan.runName, rolloutId),
      HostConfig: sandboxHostConfig(plan),
    }),
    CONTROL_TIMEOUT_MS,
    "docker create",
  );
  try {
    await withTimeout(container.start(), CONTROL_TIMEOUT_MS, "docker start");
    const keep = (await rootScript(container, "cat /proc/1/task/1/children", CONTROL_TIMEOUT_MS)).trim();
    return { container, keep };
  } catch (error) {
    await container.remove({ force: true }).catch(() => undefined);
    throw error;
  }
}

/** Commits a container's filesystem (paused while committing) to a new image; returns its tag. */
export async function commitContainer(container: Docker.Container, what: string, timeoutMs: number) {
  const tag = `c${randomBytes(6).toString("hex")}`;
  await withTimeout(container.commit({ repo: "air-image-state", tag, pause: true }), timeoutMs, what);
  return `air-image-state:${tag}`;
}

/** Copies host folders into a container at their `dest` (replacing what is there), root-owned and readable. */
export async function putFolders(container: Docker.Container, folders: MountedFolder[]): Promise<void> {
  for (const { src, dest } of folders) {
    const d = shellQuote(dest);
    await rootScript(container, `rm -rf ${d} && mkdir -p ${d}`, CONTROL_TIMEOUT_MS);
    await withTimeout(
      container.putArchive(await tarOf(src), { path: dest }),
      CONTROL_TIMEOUT_MS,
      "putArchive",
    );
    await rootScript(container, `chown -R root:root ${d} && chmod -R a+rX,go-w ${d}`, CONTROL_TIMEOUT_MS);
  }
}
