import { afterAll } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapProblem } from "./bwrap.ts";
import { DockerRuntime } from "./docker.ts";
import { DockerHostsRuntime } from "./docker-hosts.ts";
import type { DockerRuntimeOptions } from "./docker-options.ts";
import { LocalRuntime } from "./local.ts";
import { labelledContainers } from "./teardown.ts";
import { contractSuite } from "./testing/contract.ts";
import { testDockerImage } from "./testing/docker-image.ts";

/** The one contract, against every runtime that isolates: bubblewrap, one Docker engine, Docker hosts. */
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

const bwrap = await bwrapProblem(
  process.getuid?.() === 0 ? { kind: "setpriv", uid: 65_000 } : { kind: "userns" },
);
const { docker, image: IMAGE, skip: noDocker } = await testDockerImage();

/** Directories of sandboxes (and evaluation copies) under `root` after close. */
function localLeftovers(root: string): string[] {
  const entries = readdirSync(root).filter((e) => e !== "evaluations");
  return [...entries, ...readdirSync(join(root, "evaluations")).map((e) => `evaluations/${e}`)];
}

{
  const root = mkdtempSync(join(tmpdir(), "air-contract-local-"));
  roots.push(root);
  contractSuite({
    name: "local (bwrap)",
    skip: bwrap,
    make: () => new LocalRuntime({ root, python: "/usr/bin/python3" }),
    leftovers: async () => localLeftovers(root),
  });
}

function dockerOptions(runName: string): Omit<DockerRuntimeOptions, "docker" | "gpuIds" | "poolSize"> {
  return {
    image: IMAGE,
    user: "agent",
    workspace: "/home/agent/workspace",
    memoryMb: 1024,
    cpus: 1,
    pidsLimit: 256,
    network: "none",
    runName,
    timeoutMs: 60_000,
  };
}

{
  const runName = `air-contract-docker-${process.pid}`;
  contractSuite({
    name: "docker (one engine, a warm pool)",
    skip: noDocker,
    make: () => new DockerRuntime({ ...dockerOptions(runName), gpuIds: [], poolSize: 1, docker }),
    transfers: true,
    leftovers: () => labelledContainers(docker, runName),
  });
}

{
  const runName = `air-contract-hosts-${process.pid}`;
  // Two hosts on the same engine (a second dockerd costs ~30 s; docker-hosts-runtime.test.ts starts one).
  contractSuite({
    name: "docker hosts (two hosts)",
    skip: noDocker,
    make: () =>
      new DockerHostsRuntime(
        ["a", "b"].map((name) => ({
          url: "unix:///var/run/docker.sock",
          name,
          sandboxes: 2,
          gpuIds: [],
          poolSize: 1,
        })),
        { base: dockerOptions(runName), requireGpu: false, probeMs: 2000 },
      ),
    transfers: true,
    leftovers: () => labelledContainers(docker, runName),
  });
}
