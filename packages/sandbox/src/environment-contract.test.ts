import { afterAll } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapProblem } from "./bwrap.ts";
import { DockerRuntime } from "./docker.ts";
import { DockerHostsRuntime } from "./docker-hosts.ts";
import { LocalRuntime } from "./local.ts";
import { labelledContainers } from "./teardown.ts";
import { testDockerImage } from "./testing/docker-image.ts";
import { environmentSuite } from "./testing/environment-contract.ts";

/** env-harbor's needs (task environments, runs with folders, verifier evaluations, forks) on both runtimes it uses. */
const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
  // the task image the docker suite built
  const built = await docker
    .listImages({ filters: { reference: [`air-env-contract-${process.pid}`] } })
    .catch(() => []);
  for (const i of built)
    await docker
      .getImage(i.Id)
      .remove({ force: true })
      .catch(() => undefined);
});

const bwrap = await bwrapProblem(
  process.getuid?.() === 0 ? { kind: "setpriv", uid: 65_000 } : { kind: "userns" },
);
const { docker, image: IMAGE, skip: noDocker } = await testDockerImage();

{
  const root = mkdtempSync(join(tmpdir(), "air-env-contract-local-"));
  roots.push(root);
  environmentSuite(
    {
      name: "local (bwrap)",
      skip: bwrap,
      make: () => new LocalRuntime({ root, python: "/usr/bin/python3" }),
      leftovers: async () => [
        ...readdirSync(root).filter((e) => e !== "evaluations"),
        ...readdirSync(join(root, "evaluations")),
      ],
    },
    "local",
    IMAGE,
  );
}

/** A docker runtime's own settings when every task brings its image (as env-harbor makes it). */
function base(runName: string) {
  return {
    user: "root",
    workspace: "/",
    memoryMb: 2048,
    cpus: 1,
    pidsLimit: 256,
    network: "none",
    runName,
    timeoutMs: 60_000,
  };
}

/** Containers of the run and commits left after close (must be none). */
async function dockerLeftovers(runName: string): Promise<string[]> {
  const states = await docker.listImages({ filters: { reference: ["air-image-state"] } });
  return [...(await labelledContainers(docker, runName)), ...states.map((i) => i.Id)];
}

{
  const runName = `air-env-contract-docker-${process.pid}`;
  environmentSuite(
    {
      name: "docker (a task image per task)",
      skip: noDocker,
      make: () => new DockerRuntime({ ...base(runName), gpuIds: [], poolSize: 0, docker }),
      leftovers: () => dockerLeftovers(runName),
    },
    "docker",
    IMAGE,
  );
}

{
  const runName = `air-env-contract-hosts-${process.pid}`;
  // two hosts on the same engine (docker-hosts.test.ts of env-harbor runs a second dockerd)
  environmentSuite(
    {
      name: "docker hosts (two hosts, a task image per task)",
      skip: noDocker,
      make: () =>
        new DockerHostsRuntime(
          ["a", "b"].map((name) => ({
            url: "unix:///var/run/docker.sock",
            name,
            sandboxes: 4,
            gpuIds: [],
            poolSize: 0,
          })),
          { base: base(runName), requireGpu: false, probeMs: 2000 },
        ),
      leftovers: () => dockerLeftovers(runName),
    },
    "docker",
    IMAGE,
  );
}
