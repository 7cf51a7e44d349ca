import { afterAll } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapProblem } from "./bwrap.ts";
import { DockerRuntime } from "./docker.ts";
import { dockerClient, dockerReachable } from "./docker-client.ts";
import { LocalRuntime } from "./local.ts";
import { labelledContainers } from "./teardown.ts";
import { environmentSuite } from "./testing/environment-contract.ts";

/** env-harbor's needs (task environments, runs with folders, verifier evaluations, forks) on both runtimes it uses. */
const IMAGE = process.env.AIR_TEST_IMAGE ?? "air-mlgym-test:latest";
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
const docker = dockerClient();
const dockerUp = await dockerReachable(docker);
const image =
  dockerUp &&
  (await docker
    .getImage(IMAGE)
    .inspect()
    .then(
      () => true,
      () => false,
    ));
const noDocker = !dockerUp ? "no docker engine answers" : !image ? `image ${IMAGE} missing` : undefined;

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

{
  const runName = `air-env-contract-docker-${process.pid}`;
  environmentSuite(
    {
      name: "docker (a task image per task)",
      skip: noDocker,
      make: () =>
        new DockerRuntime({
          user: "root",
          workspace: "/",
          memoryMb: 2048,
          cpus: 1,
          pidsLimit: 256,
          network: "none",
          runName,
          timeoutMs: 60_000,
          gpuIds: [],
          poolSize: 0,
          docker,
        }),
      leftovers: async () => {
        const states = await docker.listImages({ filters: { reference: ["air-image-state"] } });
        return [...(await labelledContainers(docker, runName)), ...states.map((i) => i.Id)];
      },
    },
    "docker",
    IMAGE,
  );
}
