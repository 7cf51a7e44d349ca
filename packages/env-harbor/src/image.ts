import { join } from "node:path";
import { ensureImage, ImageBuildError } from "@air/sandbox";
import type Docker from "dockerode";
import { type HarborTask, HarborTaskError } from "./task.ts";

/** Lower-case, registry-safe repository name of a task folder. */
function repoName(task: HarborTask): string {
  const name = task.name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "");
  return `air-harbor/${name || "task"}`;
}

/**
 * Makes sure a task's image is in `docker`'s store and returns it: a prebuilt `docker_image` (mapped) must
 * already be there (images are never pulled); a Dockerfile is built by `@air/sandbox`'s `ensureImage`, tagged
 * `air-harbor/<task>:<hash of environment/, the mapped Dockerfile and the base images' ids>` (a rebuilt base
 * tag builds anew), within `[environment] build_timeout_sec`. Errors are {@link HarborTaskError}s naming the task
 * folder and the file; a missing base image names `[env] base_images`.
 * @example const image = await taskImage(new Docker(), task, { "python:3.12-slim": "air-mlgym-test:latest" });
 */
export async function taskImage(
  docker: Docker,
  task: HarborTask,
  mapping: Record<string, string>,
): Promise<string> {
  const given = task.config.environment.docker_image;
  if (!task.dockerfile) {
    const image = mapping[given ?? ""] ?? given ?? "";
    const there = await docker
      .getImage(image)
      .inspect()
      .then(
        () => true,
        () => false,
      );
    if (there) return image;
    throw new HarborTaskError(
      task.dir,
      "task.toml",
      `[environment] docker_image ${image} is not in the local image store (images are never pulled; load it, or map it with [env] base_images)`,
    );
  }
  try {
    return await ensureImage(docker, {
      context: join(task.dir, "environment"),
      repo: repoName(task),
      baseImages: mapping,
      timeoutMs: task.config.environment.build_timeout_sec * 1000,
      timeoutKey: "[environment] build_timeout_sec",
      labels: { "air.harbor.task": task.name },
    });
  } catch (error) {
    if (!(error instanceof ImageBuildError)) throw error;
    const hint =
      error.kind === "base"
        ? `; build or load it, or map it to a local image with [env] base_images = { "${error.images[0]}" = "air-mlgym-test:latest" }`
        : "";
    throw new HarborTaskError(task.dir, "environment/Dockerfile", `${error.message}${hint}`);
  }
}
