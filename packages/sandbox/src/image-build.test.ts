import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  baseImagesOf,
  ensureImage,
  hashDir,
  ImageBuildError,
  imageTag,
  mapBaseImages,
} from "./image-build.ts";
import { testDockerImage } from "./testing/docker-image.ts";

const { docker, image: IMAGE, skip } = await testDockerImage();
const up = skip === undefined;
const dirs: string[] = [];
const images = new Set<string>();
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  for (const image of images)
    await docker
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
});

/** A build context folder holding `files`. */
function context(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "air-image-build-test-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe("Dockerfiles", () => {
  test("FROM lines named in the mapping are replaced, stage names and others kept", () => {
    const text =
      "FROM python:3.12-slim AS base\nRUN pip install x\nFROM --platform=linux/amd64 ubuntu:24.04\nFROM base\n";
    const mapping = { "python:3.12-slim": "air-mlgym-test:latest", "ubuntu:24.04": "air-mlgym-test:latest" };
    expect(mapBaseImages(text, mapping)).toBe(
      "FROM air-mlgym-test:latest AS base\nRUN pip install x\nFROM --platform=linux/amd64 air-mlgym-test:latest\nFROM base\n",
    );
    expect(baseImagesOf(text)).toEqual(["python:3.12-slim", "ubuntu:24.04"]);
    expect(baseImagesOf("FROM scratch\nFROM $BASE\nFROM a AS A\nFROM a\n")).toEqual(["a"]);
  });

  test("the context hash changes with any byte of the folder", async () => {
    const dir = context({ Dockerfile: "FROM x\n", "app.py": "print(0)\n" });
    const before = await hashDir(dir);
    expect(await hashDir(dir)).toBe(before);
    writeFileSync(join(dir, "app.py"), "print(1)\n");
    expect(await hashDir(dir)).not.toBe(before);
  });
});

describe.skipIf(!up)("image builds on the engine", () => {
  const base = `air-image-build-base-${process.pid}`;
  images.add(`${base}:latest`);

  /** Builds a base image writing `value` to /etc/air-base and tags it `<base>:latest` (the rebuilt tag). */
  async function buildBase(value: string): Promise<string> {
    const dir = context({ Dockerfile: `FROM ${IMAGE}\nRUN echo ${value} > /etc/air-base\n` });
    const tag = await ensureImage(docker, {
      context: dir,
      repo: `${base}-src`,
      baseImages: {},
      timeoutMs: 300_000,
    });
    images.add(tag);
    await docker.getImage(tag).tag({ repo: base, tag: "latest" });
    return (await docker.getImage(`${base}:latest`).inspect()).Id;
  }

  /** What `cat /seen` prints in a container of `image`. */
  async function seen(image: string): Promise<string> {
    const container = await docker.createContainer({ Image: image, Cmd: ["cat", "/seen"], Tty: true });
    try {
      await container.start();
      await container.wait();
      return (await container.logs({ stdout: true, stderr: true })).toString("utf8").trim();
    } finally {
      await container.remove({ force: true });
    }
  }

  test("a rebuilt base tag (same name, new image) gives a new tag and a new build", async () => {
    const first = await buildBase("one");
    const task = context({ Dockerfile: "FROM task-base\nRUN cp /etc/air-base /seen\n" });
    const build = {
      context: task,
      repo: `air-image-build-task-${process.pid}`,
      baseImages: { "task-base": `${base}:latest` },
      timeoutMs: 300_000,
    };
    const a = await ensureImage(docker, build);
    images.add(a);
    expect(await seen(a)).toBe("one");
    expect(await ensureImage(docker, build)).toBe(a);
    const second = await buildBase("two");
    expect(second).not.toBe(first);
    const b = await ensureImage(docker, build);
    images.add(b);
    expect(b).not.toBe(a);
    expect(await seen(b)).toBe("two");
  }, 600_000);

  test("a missing base image is named, nothing is pulled; a failing build gives its last lines", async () => {
    const missing = context({ Dockerfile: "FROM air-no-such-image:1\nRUN true\n" });
    const build = { context: missing, repo: "air-image-build-missing", baseImages: {}, timeoutMs: 60_000 };
    const error = await imageTag(docker, build).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImageBuildError);
    expect(error).toMatchObject({ kind: "base", images: ["air-no-such-image:1"] });
    const failing = context({ Dockerfile: `FROM ${IMAGE}\nRUN echo broken-step && false\n` });
    const failed = await ensureImage(docker, { ...build, context: failing }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ kind: "build", message: expect.stringContaining("docker build failed") });
  }, 300_000);
});
