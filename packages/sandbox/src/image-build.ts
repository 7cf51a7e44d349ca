import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, lstat, mkdtemp, readdir, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type Docker from "dockerode";

/** What to build: a context folder with a Dockerfile, the repository of its tag, and how long a build may take. */
export interface ImageBuild {
  /** The build context (a Harbor task's `environment/`); its `Dockerfile` is the one built. */
  context: string;
  /** Repository of the tag, e.g. `air-harbor/hello-file`; the tag is the cache key. */
  repo: string;
  /** `FROM` images replaced before building (`{ "python:3.12-slim": "air-mlgym-test:latest" }`). */
  baseImages: Record<string, string>;
  timeoutMs: number;
  labels?: Record<string, string>;
  /** How the caller names the build timeout in messages (default `timeoutMs`). */
  timeoutKey?: string;
}

/** Why an image could not be had: `base` a `FROM` image or `image` a prebuilt one is not in the engine's store, `build` the build failed. */
export class ImageBuildError extends Error {
  constructor(
    readonly kind: "base" | "build" | "image",
    message: string,
    /** The missing base images (kind `base`), as the Dockerfile names them after the mapping. */
    readonly images: string[] = [],
  ) {
    super(message);
    this.name = "ImageBuildError";
  }
}

/**
 * sha256 over every entry of `dir` in sorted order: relative path, type, mode and contents (a link's target,
 * not followed). Two folders with the same hash build the same image (given the same base images).
 * @example await hashDir("data/harbor/hello/environment") // "3f2a…"
 */
export async function hashDir(dir: string): Promise<string> {
  const hash = createHash("sha256");
  const walk = async (at: string): Promise<void> => {
    for (const name of (await readdir(at)).sort()) {
      const path = join(at, name);
      const info = await lstat(path);
      const rel = relative(dir, path);
      if (info.isSymbolicLink()) hash.update(`L ${rel} ${await readlink(path)}\n`);
      else if (info.isDirectory()) {
        hash.update(`D ${rel} ${(info.mode & 0o777).toString(8)}\n`);
        await walk(path);
      } else if (info.isFile()) {
        hash.update(`F ${rel} ${(info.mode & 0o777).toString(8)} ${info.size}\n`);
        hash.update(await readFile(path));
      }
    }
  };
  await walk(dir);
  return hash.digest("hex");
}

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

/**
 * The images a Dockerfile starts from: every `FROM` that is not an earlier stage, not `scratch` and not built
 * from an `ARG`, in order.
 * @example baseImagesOf("FROM a AS b\nFROM b\nFROM c") // ["a", "c"]
 */
export function baseImagesOf(dockerfile: string): string[] {
  const stages = new Set<string>();
  const images: string[] = [];
  for (const m of dockerfile.matchAll(/^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?/gim)) {
    const image = m[1] as string;
    if (!stages.has(image.toLowerCase()) && !image.includes("$") && image !== "scratch")
      if (!images.includes(image)) images.push(image);
    if (m[2]) stages.add(m[2].toLowerCase());
  }
  return images;
}

async function imageId(docker: Docker, image: string): Promise<string | undefined> {
  return docker
    .getImage(image)
    .inspect()
    .then(
      (info) => info.Id,
      () => undefined,
    );
}

/**
 * The tag a build gets: `<repo>:<12 hex of sha256(context contents, the mapped Dockerfile, each base image's
 * id)>`. The base images' ids are in the key, so a rebuilt base tag (same name, new image) gives a new tag and a
 * new build, as Harbor rebuilds. Throws an {@link ImageBuildError} of kind `base` naming the base images not in
 * the engine's store (images are never pulled).
 * @example await imageTag(docker, { context: "task/environment", repo: "air-harbor/t", baseImages: {}, timeoutMs: 600_000 })
 */
export async function imageTag(docker: Docker, build: ImageBuild): Promise<string> {
  const dockerfile = mapBaseImages(
    await readFile(join(build.context, "Dockerfile"), "utf8"),
    build.baseImages,
  );
  const hash = createHash("sha256")
    .update(await hashDir(build.context))
    .update(dockerfile);
  const missing: string[] = [];
  for (const base of baseImagesOf(dockerfile)) {
    const id = await imageId(docker, base);
    if (id) hash.update(`${base} ${id}\n`);
    else missing.push(base);
  }
  if (missing.length > 0)
    throw new ImageBuildError(
      "base",
      `base image ${missing.join(", ")} is not in the engine's image store (images are never pulled)`,
      missing,
    );
  return `${build.repo}:${hash.digest("hex").slice(0, 12)}`;
}

/** The build context: the folder as is, with the Dockerfile's base images mapped; a tar stream from `tar`. */
async function contextTar(
  build: ImageBuild,
): Promise<{ tar: NodeJS.ReadableStream; done: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "air-image-build-"));
  await cp(build.context, dir, { recursive: true, verbatimSymlinks: true });
  const dockerfile = join(dir, "Dockerfile");
  await writeFile(dockerfile, mapBaseImages(await readFile(dockerfile, "utf8"), build.baseImages));
  const proc = spawn("tar", ["-cf", "-", "-C", dir, "."], { stdio: ["ignore", "pipe", "ignore"] });
  return {
    tar: proc.stdout,
    done: async () => {
      proc.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs one build; the lines it printed (the last ones name the failure). */
async function runBuild(docker: Docker, build: ImageBuild, tag: string, log: string[]): Promise<void> {
  const ctx = await contextTar(build);
  try {
    const stream = await docker.buildImage(ctx.tar, {
      t: tag,
      labels: { ...build.labels, "air.managed-image": "true" },
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
        if ("destroy" in stream && typeof stream.destroy === "function") stream.destroy();
        const key = build.timeoutKey ?? "timeoutMs";
        reject(new Error(`docker build ran past ${key} (${build.timeoutMs / 1000} s) and was stopped`));
      }, build.timeoutMs);
    });
    await Promise.race([finished, timeout]).finally(() => clearTimeout(timer));
    const failed = log.find((l) => l.startsWith("ERROR: "));
    if (failed) throw new Error(failed.slice(7));
  } finally {
    await ctx.done();
  }
}

/** Builds under way per engine and tag: concurrent callers share one build. */
const building = new WeakMap<Docker, Map<string, Promise<string>>>();

/**
 * Makes sure the image of `build` is in `docker`'s store and returns its tag ({@link imageTag}): built once per
 * context, Dockerfile and base image ids, within `timeoutMs`; concurrent calls for one tag share the build.
 * Throws an {@link ImageBuildError}: `base` when a base image is missing, `build` with the build's last lines.
 * @example const tag = await ensureImage(docker, { context, repo: "air-harbor/t", baseImages: {}, timeoutMs: 600_000 });
 */
export async function ensureImage(docker: Docker, build: ImageBuild): Promise<string> {
  const tag = await imageTag(docker, build);
  if (await imageId(docker, tag)) return tag;
  const running = building.get(docker) ?? new Map<string, Promise<string>>();
  building.set(docker, running);
  let entry = running.get(tag);
  if (!entry) {
    entry = (async () => {
      const log: string[] = [];
      try {
        await runBuild(docker, build, tag, log);
      } catch (error) {
        throw new ImageBuildError(
          "build",
          `docker build failed: ${(error as Error).message}\n${log.slice(-8).join("\n")}`,
        );
      }
      if (!(await imageId(docker, tag)))
        throw new ImageBuildError(
          "build",
          `docker build ended without an image ${tag}:\n${log.slice(-8).join("\n")}`,
        );
      return tag;
    })().finally(() => running.delete(tag));
    running.set(tag, entry);
  }
  return entry;
}
