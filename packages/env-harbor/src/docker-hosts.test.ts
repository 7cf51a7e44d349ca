import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type DockerHostsRuntime, dockerClient, labelledContainers } from "@air/sandbox";
import {
  copyImage,
  type SecondDockerd,
  secondDockerdProblem,
  startSecondDockerd,
} from "@air/sandbox/testing/second-dockerd";
import { harborConfigSchema } from "./config.ts";
import { HarborSandboxes, harborRuntime } from "./sandboxes.ts";
import { HarborSession } from "./session.ts";
import { loadHarborTask } from "./task.ts";
import { OWN_TASKS } from "./testing/fixtures.ts";

const problem = secondDockerdProblem();
let second: SecondDockerd | undefined;
const RUN = `/tmp/air-harbor-hosts-${process.pid}`;

beforeAll(async () => {
  if (problem) return;
  second = await startSecondDockerd();
  copyImage("air-mlgym-test:latest", second);
}, 600_000);
afterAll(async () => {
  await second?.remove();
}, 300_000);

describe.skipIf(problem !== undefined)("several docker hosts", () => {
  test("each task's image is built on every host; rollouts spread by free room, wait when all are full, and score on both", async () => {
    const s = second as SecondDockerd;
    const config = harborConfigSchema.parse({
      dataset: OWN_TASKS,
      oracle: true,
      allow_internet: false,
      docker: {
        pids_limit: 256,
        hosts: [
          { url: "unix:///var/run/docker.sock", name: "main", sandboxes: 1 },
          { url: s.url, name: "second", sandboxes: 1, tls: s.tls },
        ],
      },
    });
    const root = join(RUN, "sandboxes");
    const hosts = harborRuntime(config, { configDir: "/", runName: RUN, root });
    const runtime = new HarborSandboxes(hosts, config, root);
    const load = () =>
      Object.fromEntries((hosts as DockerHostsRuntime).hosts.map((h) => [h.spec.name, h.busy]));
    const task = await loadHarborTask(join(OWN_TASKS, "hello-file"));
    try {
      const ready = await runtime.prepare(task);
      expect(ready).toMatch(
        /^main: image air-harbor\/hello-file:\S+; second: image air-harbor\/hello-file:\S+$/,
      );
      for (const [docker, image] of [
        [dockerClient(), ready.match(/main: image (\S+);/)?.[1]],
        [s.docker, ready.match(/second: image (\S+)$/)?.[1]],
      ] as const)
        expect((await docker.getImage(image as string).inspect()).Id).toBeTruthy();
      const [a, b] = await Promise.all([
        runtime.open(task, { rolloutId: "h-a" }),
        runtime.open(task, { rolloutId: "h-b" }),
      ]);
      expect(load()).toEqual({ main: 1, second: 1 });
      let third = false;
      const waiting = runtime.open(task, { rolloutId: "h-c" }).then((box) => {
        third = true;
        return box;
      });
      await Bun.sleep(1000);
      expect(third).toBe(false);
      const scores = [];
      for (const [i, box] of [a, b].entries()) {
        const session = new HarborSession(box, task, { config, sandboxes: runtime, rolloutId: `h-${i}` });
        await session.start();
        scores.push((await session.step({ text: "submit", command: "submit" })).scores);
        await session.close();
      }
      expect(scores).toEqual([{ reward: 1 }, { reward: 1 }]);
      const c = await waiting;
      expect(third).toBe(true);
      await runtime.release(c);
    } finally {
      await runtime.close();
    }
    expect(await labelledContainers(dockerClient(), RUN)).toEqual([]);
    expect(await labelledContainers(s.docker, RUN)).toEqual([]);
  }, 600_000);
});
