import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dockerClient, dockerReachable } from "./docker-client.ts";
import { DockerHostsRuntime } from "./docker-hosts.ts";
import { SnapshotStore } from "./snapshot-store.ts";
import { labelledContainers } from "./teardown.ts";
import { contractTask } from "./testing/contract.ts";
import { environmentTask } from "./testing/environment-contract.ts";
import {
  copyImage,
  type SecondDockerd,
  secondDockerdProblem,
  startSecondDockerd,
} from "./testing/second-dockerd.ts";

/**
 * A stored snapshot taken on one Docker host restores on another (a second dockerd: its own data root, TCP + TLS,
 * the test image copied into it): the snapshot lives on this machine, not in either engine.
 */
const IMAGE = process.env.AIR_TEST_IMAGE ?? "air-mlgym-test:latest";
const MAIN = "unix:///var/run/docker.sock";
const docker = dockerClient();
const problem =
  secondDockerdProblem() ??
  (!(await dockerReachable(docker))
    ? "no docker engine answers"
    : await docker
        .getImage(IMAGE)
        .inspect()
        .then(
          () => undefined,
          () => `image ${IMAGE} missing`,
        ));
if (problem) console.warn(`skipping the snapshot restore on a second dockerd: ${problem}`);

let second: SecondDockerd | undefined;
const runName = `air-snapshot-hosts-${process.pid}`;
beforeAll(async () => {
  if (problem) return;
  second = await startSecondDockerd();
  copyImage(IMAGE, second);
}, 300_000);
afterAll(async () => {
  await second?.remove();
}, 300_000);

function hostsRuntime(host: { url: string; name: string; tls?: SecondDockerd["tls"] }): DockerHostsRuntime {
  return new DockerHostsRuntime([{ ...host, sandboxes: 1, gpuIds: [], poolSize: 0 }], {
    base: {
      image: IMAGE,
      user: "agent",
      workspace: "/home/agent/workspace",
      memoryMb: 1024,
      cpus: 1,
      pidsLimit: 256,
      network: "none",
      runName,
      timeoutMs: 60_000,
    },
    requireGpu: false,
    probeMs: 2000,
  });
}

test.skipIf(problem !== undefined)(
  "saved on the main engine, restored on the second dockerd: files (/tmp too), modes, directory; an incremental snapshot whose predecessor was pruned",
  async () => {
    const d2 = second as SecondDockerd;
    const files = contractTask();
    const store = new SnapshotStore(mkdtempSync(join(tmpdir(), "air-snapshot-hosts-")));
    const a = hostsRuntime({ url: MAIN, name: "main" });
    const b = hostsRuntime({ url: d2.url, name: "second", tls: d2.tls });
    try {
      const box = await a.acquire(files, { rolloutId: "h1" });
      await box.exec(
        "head -c 2000000 /dev/urandom > big.bin; md5sum big.bin > big.md5; mkdir -p sub && echo moved > sub/f; " +
          "echo t > /tmp/t.txt && chmod 640 /tmp/t.txt",
        30_000,
      );
      const first = await a.saveSnapshot(box, store, "h1-t0");
      await box.exec("chmod 640 sub/f && cd sub", 30_000);
      const handle = JSON.parse(JSON.stringify(await a.saveSnapshot(box, store, "h1-t1")));
      // the second snapshot sent only what changed (not big.bin), and stands alone once the first is pruned
      expect(handle.transferredBytes).toBeLessThan(100_000);
      expect(await store.prune((id) => id === first.id)).toEqual([first.id]);
      await a.release(box, true);
      const there = await b.acquire(files, { rolloutId: "h2", restore: handle });
      expect(
        (
          await there.exec(
            "pwd; cat f; stat -c %a f; cat ../data/train.csv; cat /tmp/t.txt; stat -c '%a %U' /tmp/t.txt; cd .. && md5sum -c big.md5",
            30_000,
          )
        ).output,
      ).toBe(`${there.workspace}/sub\nmoved\n640\nx,y\n1,2\nt\n640 agent\nbig.bin: OK\n`);
      expect(await labelledContainers(d2.docker, runName)).toHaveLength(1);
      await b.release(there, true);
    } finally {
      await a.close();
      await b.close();
      files.remove();
      rmSync(store.dir, { recursive: true, force: true });
    }
  },
  300_000,
);

test.skipIf(problem !== undefined)(
  "a task image's snapshot saved on the main engine restores on the second dockerd (its image built there): WORKDIR, /tmp, the task's dirs",
  async () => {
    const d2 = second as SecondDockerd;
    const files = environmentTask("docker", IMAGE);
    const store = new SnapshotStore(mkdtempSync(join(tmpdir(), "air-snapshot-hosts-image-")));
    const a = hostsRuntime({ url: MAIN, name: "main" });
    const b = hostsRuntime({ url: d2.url, name: "second", tls: d2.tls });
    try {
      const box = await a.acquire(files, { rolloutId: "g1" });
      await box.exec(
        "head -c 2000000 /dev/urandom > big.bin; md5sum big.bin > big.md5; echo t > /tmp/t.txt; echo l > /logs/agent/l.txt",
        30_000,
      );
      const first = await a.saveSnapshot(box, store, "g1-t0");
      await box.exec("echo changed > from-image.txt; rm big.md5; mkdir -p sub && cd sub", 30_000);
      const handle = JSON.parse(JSON.stringify(await a.saveSnapshot(box, store, "g1-t1")));
      expect(handle.format).toBe("tree");
      expect(handle.transferredBytes).toBeLessThan(100_000);
      expect(await store.prune((id) => id === first.id)).toEqual([first.id]);
      await a.release(box, true);
      const there = await b.acquire(files, { rolloutId: "g2", restore: handle });
      expect(
        (
          await there.exec(
            "pwd; cd .. && cat from-image.txt /tmp/t.txt /logs/agent/l.txt; [ -e big.md5 ] || echo no-md5; md5sum big.bin | cut -c1-32",
            30_000,
          )
        ).output,
      ).toBe(
        `${there.workspace}/sub\nchanged\nt\nl\nno-md5\n${new Bun.CryptoHasher("md5").update(await Bun.file(join(handle.path, "workspace", "big.bin")).arrayBuffer()).digest("hex")}\n`,
      );
      await b.release(there, true);
    } finally {
      await a.close();
      await b.close();
      files.remove();
      rmSync(store.dir, { recursive: true, force: true });
      for (const i of await docker.listImages({
        filters: { reference: [`air-env-contract-${process.pid}`] },
      }))
        await docker
          .getImage(i.Id)
          .remove({ force: true })
          .catch(() => undefined);
    }
  },
  600_000,
);
