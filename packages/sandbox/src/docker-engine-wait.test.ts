import { expect, test } from "bun:test";
import type Docker from "dockerode";
import { DockerRuntime } from "./docker.ts";
import type { TaskFiles } from "./types.ts";

/** A Docker API stand-in: createContainer fails with the given errors in turn; ping fails `downPings` times. */
function standIn(createErrors: string[], downPings: number) {
  const calls = { create: 0, ping: 0 };
  const docker = {
    createContainer: async () => {
      const message = createErrors[calls.create++] ?? "no more";
      throw new Error(message);
    },
    ping: async () => {
      calls.ping++;
      if (calls.ping <= downPings) throw new Error("connect ECONNREFUSED /var/run/docker.sock");
      return "OK";
    },
  } as unknown as Docker;
  return { docker, calls };
}

function runtime(docker: Docker, timeoutMs: number): DockerRuntime {
  return new DockerRuntime({
    image: "x",
    user: "agent",
    workspace: "/home/agent/workspace",
    lockPaths: [],
    memoryMb: 512,
    cpus: 1,
    pidsLimit: 64,
    network: "none",
    gpuIds: [],
    poolSize: 0,
    runName: "/tmp/run",
    timeoutMs,
    docker,
  } as ConstructorParameters<typeof DockerRuntime>[0]);
}

const files: TaskFiles = { key: "k", dir: "/nonexistent", readOnly: [] };

test("an engine that does not answer (dockerd restarting) is waited for, then the container is created again", async () => {
  const { docker, calls } = standIn(["connect ECONNREFUSED", "second attempt reached the engine"], 2);
  const error = await runtime(docker, 10_000)
    .acquire(files, { rolloutId: "r" })
    .catch((e: Error) => e);
  expect((error as Error).message).toBe("second attempt reached the engine");
  expect(calls).toEqual({ create: 2, ping: 3 });
});

test("an engine that answers: the first failure is thrown at once, no second attempt", async () => {
  const { docker, calls } = standIn(["image not found"], 0);
  const error = await runtime(docker, 10_000)
    .acquire(files, { rolloutId: "r" })
    .catch((e: Error) => e);
  expect((error as Error).message).toBe("image not found");
  expect(calls).toEqual({ create: 1, ping: 1 });
});

test("an engine that stays down: the wait ends at timeoutMs with the first error", async () => {
  const { docker, calls } = standIn(["connect ECONNREFUSED"], 1_000);
  const error = await runtime(docker, 1200)
    .acquire(files, { rolloutId: "r" })
    .catch((e: Error) => e);
  expect((error as Error).message).toBe("connect ECONNREFUSED");
  expect(calls.create).toBe(1);
  expect(calls.ping).toBeGreaterThanOrEqual(2);
});
