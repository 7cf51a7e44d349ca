import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { harborConfigSchema } from "./config.ts";
import { imageFor, mapBaseImages } from "./image.ts";
import { baseImagesOf, harborLaunch } from "./launch.ts";
import { localPlan } from "./local-plan.ts";
import { loadHarborTask } from "./task.ts";
import { OWN_TASKS, scratchDataset } from "./testing/fixtures.ts";

describe("which tasks run locally", () => {
  test("FROM the test image with WORKDIR and COPY into it: yes, with the copies", async () => {
    const plan = await localPlan(await loadHarborTask(join(OWN_TASKS, "ml-regression")), {});
    expect(plan).toEqual({
      ok: true,
      workdir: "/app",
      env: {},
      copies: [
        { src: join(OWN_TASKS, "ml-regression/environment/data"), dest: "/app/data" },
        { src: join(OWN_TASKS, "ml-regression/environment/train.py"), dest: "/app/train.py" },
      ],
    });
  });
  test("a RUN, another base image, a COPY outside the WORKDIR: no, naming the line", async () => {
    const sum = await localPlan(await loadHarborTask(join(OWN_TASKS, "sum-numbers")), {});
    expect(sum).toEqual({ ok: false, reason: "Dockerfile line 3: RUN needs a docker build" });
    const d = await scratchDataset(["hello-file", "fizzbuzz-partial"], {
      "hello-file/environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\n",
      "fizzbuzz-partial/environment/Dockerfile":
        "FROM air-mlgym-test:latest\nWORKDIR /app\nCOPY fizzbuzz.py /srv/\n",
    });
    try {
      const hello = await loadHarborTask(join(d.dir, "hello-file"));
      expect(await localPlan(hello, {})).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/line 1: FROM python:3\.12-slim is not the local test image/),
      });
      // with a base-image mapping it runs locally
      expect(await localPlan(hello, { "python:3.12-slim": "air-mlgym-test:latest" })).toMatchObject({
        ok: true,
        workdir: "/app",
      });
      const fizz = await loadHarborTask(join(d.dir, "fizzbuzz-partial"));
      expect(await localPlan(fizz, {})).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/line 3: COPY to \/srv, outside the WORKDIR \/app/),
      });
    } finally {
      await d.remove();
    }
  });
});

describe("base images", () => {
  test("FROM lines named in the mapping are replaced, stage names and others kept", () => {
    const text =
      "FROM python:3.12-slim AS base\nRUN pip install x\nFROM --platform=linux/amd64 ubuntu:24.04\nFROM base\n";
    expect(
      mapBaseImages(text, {
        "python:3.12-slim": "air-mlgym-test:latest",
        "ubuntu:24.04": "air-mlgym-test:latest",
      }),
    ).toBe(
      "FROM air-mlgym-test:latest AS base\nRUN pip install x\nFROM --platform=linux/amd64 air-mlgym-test:latest\nFROM base\n",
    );
  });
  test("the image tag follows environment/ and the mapping", async () => {
    const task = await loadHarborTask(join(OWN_TASKS, "hello-file"));
    const plain = imageFor(task, {});
    expect(plain).toMatch(/^air-harbor\/hello-file:[0-9a-f]{12}$/);
    expect(imageFor(task, {})).toBe(plain);
    expect(imageFor(task, { "python:3.12-slim": "x" })).not.toBe(plain);
  });
});

describe("what the launcher is told", () => {
  test("the base images of the dataset's Dockerfiles (stages skipped, mapping applied)", async () => {
    const d = await scratchDataset(["hello-file", "sum-numbers"], {
      "hello-file/environment/Dockerfile":
        "FROM python:3.12-slim AS build\nRUN true\nFROM build\nWORKDIR /app\n",
    });
    try {
      const config = harborConfigSchema.parse({
        dataset: d.dir,
        base_images: { "python:3.12-slim": "py-local:1" },
      });
      expect(baseImagesOf(config, "/")).toEqual(["air-mlgym-test:latest", "py-local:1"]);
      expect(harborLaunch.needs?.({ ...config, runtime: "local" }, { configDir: "/", runDir: "/x" })).toEqual(
        {},
      );
    } finally {
      await d.remove();
    }
  });
});
