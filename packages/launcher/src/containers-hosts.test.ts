import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mlgymConfigSchema, mlgymLaunch } from "@air/env-mlgym";
import {
  type SecondDockerd,
  secondDockerdProblem,
  startSecondDockerd,
} from "@air/sandbox/testing/second-dockerd";
import {
  dockerClient,
  dockerReachable,
  readDockerHosts,
  removeRunContainers,
  writeDockerHosts,
} from "./containers.ts";

/**
 * Teardown on several Docker hosts: the run records its hosts (`docker-hosts.json`, from the env's
 * `launch.needs().dockerHosts`) and `removeRunContainers` — the launcher's teardown, its reaper and `rl clean` —
 * removes the run's labelled containers in the default engine and on every recorded host (a second dockerd
 * over TCP + TLS started here).
 */
const problem =
  secondDockerdProblem() ?? ((await dockerReachable()) ? undefined : "no docker engine answers");
if (problem) console.warn(`skipping docker hosts teardown test: ${problem}`);
const dirs: string[] = [];
let second: SecondDockerd | undefined;

afterAll(async () => {
  await second?.remove();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}, 60_000);

describe("teardown on several docker hosts", () => {
  test("the env's needs name its hosts with absolute TLS paths; none without hosts", () => {
    const config = mlgymConfigSchema.parse({
      tasks: ["x"],
      docker: {
        hosts: [
          { url: "unix:///var/run/docker.sock", sandboxes: 2 },
          {
            url: "tcp://10.0.0.2:2376",
            sandboxes: 8,
            tls: { ca: "certs/ca.pem", cert: "certs/cert.pem", key: "certs/key.pem" },
          },
        ],
      },
    });
    const needs = mlgymLaunch.needs?.(config, { configDir: "/cfg", runDir: "/run" });
    expect(needs).toEqual({
      dockerHosts: [
        { url: "unix:///var/run/docker.sock" },
        {
          url: "tcp://10.0.0.2:2376",
          tls: { ca: "/cfg/certs/ca.pem", cert: "/cfg/certs/cert.pem", key: "/cfg/certs/key.pem" },
        },
      ],
    });
    const single = mlgymLaunch.needs?.(mlgymConfigSchema.parse({ tasks: ["x"] }), {
      configDir: "/cfg",
      runDir: "/run",
    });
    expect(single).toEqual({ dockerImages: ["aigym/mlgym-agent:latest"] });
  });

  test.skipIf(problem !== undefined)(
    "removeRunContainers removes the run's containers in the default engine and on each recorded host",
    async () => {
      const docker0 = () =>
        Bun.spawnSync(["ip", "link", "show", "docker0"], { stdout: "ignore", stderr: "ignore" }).exitCode ===
        0;
      const hadBridge = docker0();
      second = await startSecondDockerd();
      const d = second;
      // the second daemon leaves the main engine's bridge alone (dockerd --bridge=none would delete docker0)
      expect(docker0()).toBe(hadBridge);
      // a one-file image on the second daemon (containers are created, never started)
      const empty = mkdtempSync(join(tmpdir(), "air-empty-image-"));
      dirs.push(empty);
      const imported = Bun.spawnSync(
        [
          "bash",
          "-c",
          `echo x > "$0/x" && tar -C "$0" -c . | docker "$@" import - air-teardown-test:latest`,
          empty,
          ...d.cliArgs,
        ],
        { stderr: "pipe" },
      );
      expect(imported.exitCode).toBe(0);
      const runDir = mkdtempSync(join(tmpdir(), "air-hosts-teardown-"));
      dirs.push(runDir);
      const other = mkdtempSync(join(tmpdir(), "air-hosts-other-"));
      dirs.push(other);
      const labels = (run: string) => ({ "air.run": run, "air.managed": "true", "air.rollout": "r" });
      const onSecond = await d.docker.createContainer({
        Image: "air-teardown-test:latest",
        Cmd: ["/x"],
        Labels: labels(runDir),
      });
      const otherRun = await d.docker.createContainer({
        Image: "air-teardown-test:latest",
        Cmd: ["/x"],
        Labels: labels(other),
      });
      const main = dockerClient();
      const images = await main.listImages();
      const image = images.find((i) => (i.RepoTags ?? []).some((t) => t !== "<none>:<none>"))?.RepoTags?.[0];
      if (image === undefined) throw new Error("no tagged image in the default engine");
      const onMain = await main.createContainer({ Image: image, Cmd: ["true"], Labels: labels(runDir) });
      try {
        // without the hosts file only the default engine is swept
        expect(await removeRunContainers(runDir)).toEqual([onMain.id]);
        const again = await main.createContainer({ Image: image, Cmd: ["true"], Labels: labels(runDir) });
        writeDockerHosts(runDir, [{ url: d.url, tls: d.tls }]);
        expect(readDockerHosts(runDir)).toEqual([{ url: d.url, tls: d.tls }]);
        expect((await removeRunContainers(runDir)).sort()).toEqual([again.id, onSecond.id].sort());
        const left = await d.docker.listContainers({ all: true });
        expect(left.map((c) => c.Id)).toEqual([otherRun.id]);
      } finally {
        await otherRun.remove({ force: true }).catch(() => undefined);
        await onMain.remove({ force: true }).catch(() => undefined);
      }
    },
    120_000,
  );
});
