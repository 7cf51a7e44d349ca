import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureImage, labelledContainers } from "@air/sandbox";
import { testDockerImage } from "@air/sandbox/testing/docker-image";
import { harborConfigSchema } from "./config.ts";
import { HarborSandboxes, harborRuntime } from "./sandboxes.ts";
import { HarborSession } from "./session.ts";
import { loadHarborTask } from "./task.ts";
import { scratchDataset } from "./testing/fixtures.ts";

const { docker, image: IMAGE, skip } = await testDockerImage();
const up = skip === undefined;
const RUN = `air-harbor-stale-base-${process.pid}`;
const BASE = `air-harbor-stale-base-${process.pid}`;
const images = new Set<string>([`${BASE}:latest`]);
const dirs: string[] = [];
afterAll(async () => {
  for (const image of images)
    await docker
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** (Re)builds the base tag `<BASE>:latest` with `/etc/air-base` holding `value`, as a user rebuilds a base. */
async function rebuildBase(value: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "air-stale-base-"));
  dirs.push(dir);
  writeFileSync(join(dir, "Dockerfile"), `FROM ${IMAGE}\nRUN echo ${value} > /etc/air-base\n`);
  const tag = await ensureImage(docker, {
    context: dir,
    repo: `${BASE}-src`,
    baseImages: {},
    timeoutMs: 300_000,
  });
  images.add(tag);
  await docker.getImage(tag).tag({ repo: BASE, tag: "latest" });
}

/** One run's verifier reward on the task (test.sh: 1 when the base says "two"), and the task image it used. */
async function runTask(dataset: string): Promise<{ reward: string | undefined; image: string }> {
  const config = harborConfigSchema.parse({
    dataset,
    base_images: { "python:3.12-slim": `${BASE}:latest` },
    allow_internet: false,
  });
  const root = mkdtempSync(join(tmpdir(), "air-stale-base-run-"));
  dirs.push(root);
  const runtime = new HarborSandboxes(
    harborRuntime(config, { configDir: "/", runName: RUN, root }),
    config,
    root,
  );
  const task = await loadHarborTask(join(dataset, "hello-file"));
  try {
    const image = (await runtime.prepare(task)).replace(/^image /, "");
    images.add(image);
    const rolloutId = "stale-base";
    const box = await runtime.open(task, { rolloutId });
    const session = new HarborSession(box, task, { config, sandboxes: runtime, rolloutId });
    try {
      return { reward: (await session.runVerifier()).rewardText?.trim(), image };
    } finally {
      await session.close();
    }
  } finally {
    await runtime.close();
  }
}

describe.skipIf(!up)("a rebuilt base image", () => {
  test("rebuild a base tag, run a Harbor task: the task image is rebuilt from the new base", async () => {
    const d = await scratchDataset(["hello-file"], {
      "hello-file/environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\n",
      "hello-file/tests/test.sh": `#!/bin/bash\n[ "$(cat /etc/air-base)" = two ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n`,
    });
    try {
      await rebuildBase("one");
      const before = await runTask(d.dir);
      expect(before.reward).toBe("0");
      await rebuildBase("two");
      const after = await runTask(d.dir);
      expect(after.image).not.toBe(before.image);
      expect(after.reward).toBe("1");
      expect(await labelledContainers(docker, RUN)).toEqual([]);
    } finally {
      await d.remove();
    }
  }, 600_000);
});
