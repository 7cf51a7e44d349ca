import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DockerRuntime } from "./docker.ts";
import { runProcess } from "./process.ts";
import { SnapshotStore } from "./snapshot-store.ts";
import { labelledContainers } from "./teardown.ts";
import { contractTask } from "./testing/contract.ts";
import { testDockerImage } from "./testing/docker-image.ts";

/**
 * What the root-side snapshot step of a docker workspace sandbox must never store from /tmp: files the agent does
 * not own (made here by root, as another user's would be), and what lies below a directory that is not the agent's.
 */
const { docker, image, skip } = await testDockerImage();
const runName = `air-docker-snapshot-${process.pid}`;
const files = contractTask();
const store = new SnapshotStore(mkdtempSync(join(tmpdir(), "air-docker-snapshot-")));
afterAll(() => {
  files.remove();
  rmSync(store.dir, { recursive: true, force: true });
});

test.skipIf(skip !== undefined)(
  "a docker snapshot stores none of root's files in /tmp, nor what lies in a root directory there",
  async () => {
    const runtime = new DockerRuntime({
      image,
      user: "agent",
      workspace: "/home/agent/workspace",
      memoryMb: 1024,
      cpus: 1,
      pidsLimit: 256,
      network: "none",
      runName,
      timeoutMs: 60_000,
      gpuIds: [],
      poolSize: 0,
      docker,
    });
    try {
      const box = await runtime.acquire(files, { rolloutId: "r0" });
      // root's secret, root's directory (open to all) holding a file of the agent's, and a file of the agent's
      const asRoot = await runProcess(
        [
          "docker",
          "exec",
          "-u",
          "root",
          box.id,
          "sh",
          "-c",
          "echo secret > /tmp/root-secret && chmod 644 /tmp/root-secret && mkdir -m 1777 /var/tmp/root-dir",
        ],
        { cwd: "/", timeoutMs: 60_000 },
      );
      expect(asRoot.stderr).toBe("");
      expect(asRoot.exitCode).toBe(0);
      const made = await box.exec(
        "echo in-root-dir > /var/tmp/root-dir/mine && echo mine > /tmp/mine && cat /tmp/root-secret",
        30_000,
      );
      expect(made.output).toBe("secret\n");
      const handle = await runtime.saveSnapshot(box, store, "r0-t0");
      expect(handle.outside).toEqual(["/tmp", "/var/tmp"]);
      expect(readdirSync(join(handle.path, "outside", "0"))).toEqual(["mine"]);
      expect(readdirSync(join(handle.path, "outside", "1"))).toEqual([]);
      expect(existsSync(join(handle.path, "workspace", "README.md"))).toBe(true);
      await runtime.release(box, true);
      expect(await labelledContainers(docker, runName)).toHaveLength(0);
    } finally {
      await runtime.close();
    }
  },
  180_000,
);
