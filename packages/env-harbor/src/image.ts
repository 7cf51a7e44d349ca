import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { type HarborTask, HarborTaskError } from "./task.ts";

/**
 * The Dockerfile with every `FROM <image>` named in `mapping` replaced (`FROM python:3.12-slim AS base` keeps
 * its stage name). Images not in the mapping are kept.
 * @example mapBaseImages("FROM python:3.12-slim\nRUN true", { "python:3.12-slim": "air-mlgym-test:latest" })
 */
export function mapBaseImages(dockerfile: string, mapping: Record<string, string>): string {
  return dockerfile.replace(
    /^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)/gim,
    (all, from: string, flags: string, image: string) =>
      mapping[image] !== undefined ? `${from}${flags}${mapping[image]}` : all,
  );
}

/** Lower-case, registry-safe repository name of a task folder. */
function repoName(task: HarborTask): string {
  return `air-harbor/${
    task.name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, "-")
      .replace(/^[^a-z0-9]+/, "") || "task"
  }`;
}

/**
 * The image a task's sandbox runs: its `docker_image` (mapped) when it has no Dockerfile, else the tag of its
 * build, `air-harbor/<task>:<12 hex of sha256(environment/ + base-image mapping)>`: the same folder builds once
 * per engine.
 * @example imageFor(task, {}) // "air-harbor/hello-file:3f2a9c1d0b7e"
 */
export function imageFor(task: HarborTask, mapping: Record<string, string>): string {
  const given = task.config.environment.docker_image;
  if (!task.dockerfile && given) return mapping[given] ?? given;
  const hash = createHash("sha256")
    .update(task.environmentHash)
    .update(JSON.stringify(mapping))
    .digest("hex");
  return `${repoName(task)}:${hash.slice(0, 12)}`;
}

async function imageExists(docker: Docker, image: string): Promise<boolean> {
  return docker
    .getImage(image)
    .inspect()
    .then(
      () => true,
      () => false,
    );
}

/** The build context: environment/ as is, with the Dockerfile's base images mapped; a tar stream from `tar`. */
async function context(
  task: HarborTask,
  mapping: Record<string, string>,
): Promise<{ tar: NodeJS.ReadableStream; done: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "air-harbor-build-"));
  await cp(join(task.dir, "environment"), dir, { recursive: true, verbatimSymlinks: true });
  const dockerfile = join(dir, "Dockerfile");
  await writeFile(dockerfile, mapBaseImages(await readFile(dockerfile, "utf8"), mapping));
  const proc = spawn("tar", ["-cf", "-", "-C", dir, "."], { stdio: ["ignore", "pipe", "ignore"] });
  return {
    tar: proc.stdout,
    done: async () => {
      proc.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Makes sure a task's image is in `docker`'s store: a prebuilt `docker_image` must already be there (images are
 * never pulled); a Dockerfile is built once per content hash, within `[environment] build_timeout_sec`. Errors
 * are {@link HarborTaskError}s naming the task folder and `environment/Dockerfile` (or task.toml).
 * @example const image = await ensureImage(new Docker(), task, { "python:3.12-slim": "air-mlgym-test:latest" });
 */
export async function ensureImage(
  docker: Docker,
  task: HarborTask,
  mapping: Record<string, string>,
): Promise<string> {
  const image = imageFor(task, mapping);
  if (await imageExists(docker, image)) return image;
  if (!task.dockerfile)
    throw new HarborTaskError(
      task.dir,
      "task.toml",
      `[environment] docker_image ${image} is not in the local image store (images are never pulled; load it, or map it with [env] base_images)`,
    );
  const timeoutS = task.config.environment.build_timeout_sec;
  const ctx = await context(task, mapping);
  const log: string[] = [];
  try {
    const stream = await docker.buildImage(ctx.tar, {
      t: image,
      labels: { "air.harbor.task": task.name, "air.managed-image": "true" },
      forcerm: true,
      rm: true,
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finished = new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(
        stream,
        (error) => (error ? reject(error) : resolve()),
        (event: { stream?: string; error?: string; errorDetail?: { message?: string } }) => {
          // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes in docker's build output
          const plain = (t: string) => t.replace(/\x1b\[[0-9;]*m/g, "");
          if (event.stream)
            log.push(
              ...plain(event.stream)
                .split("\n")
                .filter((l) => l.trim()),
            );
          if (event.error) log.push(`ERROR: ${event.errorDetail?.message ?? event.error}`);
        },
      );
    });
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        (stream as unknown as { destroy?: () => void }).destroy?.();
        reject(
          new Error(`docker build ran past [environment] build_timeout_sec = ${timeoutS} s and was stopped`),
        );
      }, timeoutS * 1000);
    });
    await Promise.race([finished, timeout]).finally(() => clearTimeout(timer));
    const failed = log.find((l) => l.startsWith("ERROR: "));
    if (failed) throw new Error(failed.slice(7));
  } catch (error) {
    throw new HarborTaskError(
      task.dir,
      "environment/Dockerfile",
      `docker build failed: ${(error as Error).message}\n${log.slice(-8).join("\n")}`,
    );
  } finally {
    await ctx.done();
  }
  if (!(await imageExists(docker, image)))
    throw new HarborTaskError(
      task.dir,
      "environment/Dockerfile",
      `docker build ended without an image ${image}:\n${log.slice(-8).join("\n")}`,
    );
  return image;
}
