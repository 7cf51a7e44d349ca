import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { harborConfigSchema } from "./config.ts";
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
