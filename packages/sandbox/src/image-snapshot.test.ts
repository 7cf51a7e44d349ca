import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  appendFileSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DockerRuntime } from "./docker.ts";
import { ImageSandbox } from "./image-sandbox.ts";
import { SnapshotStore } from "./snapshot-store.ts";
import { labelledContainers } from "./teardown.ts";
import { testDockerImage } from "./testing/docker-image.ts";
import { environmentTask } from "./testing/environment-contract.ts";
import type { Sandbox, SnapshotHandle } from "./types.ts";

/**
 * Stored snapshots of a task with its own image (Harbor's shape, the agent root in its WORKDIR): incremental trees
 * on this machine, the WORKDIR plus /tmp and the task's writable dirs, restored in a fresh container.
 */
const { docker, image: IMAGE, skip } = await testDockerImage();
const runName = `air-image-snapshot-${process.pid}`;
let files: ReturnType<typeof environmentTask>;
let store: SnapshotStore;
let runtime: DockerRuntime;
let n = 0;

function makeRuntime(): DockerRuntime {
  return new DockerRuntime({
    image: IMAGE,
    user: "root",
    workspace: "/",
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
}

const out = async (box: Sandbox, command: string) => (await box.exec(command, 60_000)).output;
/** A handle as another process reads it back from the store's JSON. */
const stored = (h: SnapshotHandle): SnapshotHandle => JSON.parse(JSON.stringify(h));

describe.skipIf(skip !== undefined)("stored snapshots of a task image", () => {
  beforeAll(async () => {
    files = environmentTask("docker", IMAGE);
    store = new SnapshotStore(mkdtempSync(join(tmpdir(), "air-image-snapshot-")));
    runtime = makeRuntime();
    await runtime.prepareTask?.(files);
  }, 600_000);
  afterAll(async () => {
    await runtime?.close();
    files?.remove();
    if (store) rmSync(store.dir, { recursive: true, force: true });
    for (const i of await docker.listImages({ filters: { reference: [`air-env-contract-${process.pid}`] } }))
      await docker
        .getImage(i.Id)
        .remove({ force: true })
        .catch(() => undefined);
  }, 120_000);

  test("the second snapshot sends only what changed; changed, deleted and outside files restore exactly elsewhere", async () => {
    const box = await runtime.acquire(files, { rolloutId: `i${++n}` });
    expect(box).toBeInstanceOf(ImageSandbox);
    await out(
      box,
      "head -c 3000000 /dev/urandom > big.bin; md5sum big.bin > big.md5; echo a > keep.txt; chmod 640 keep.txt; " +
        "echo b > gone.txt; mkdir -p sub && echo c > sub/f; echo t > /tmp/t.txt; echo log > /logs/agent/l.txt",
    );
    const first = await runtime.saveSnapshot(box, store, "i-t0");
    expect(first.format).toBe("tree");
    expect(first.outside).toEqual(["/tmp", "/var/tmp", "/logs/agent", "/logs/verifier"]);
    expect(first.transferredBytes ?? 0).toBeGreaterThan(3_000_000);
    await out(
      box,
      "echo a2 > keep.txt; rm gone.txt; echo new > sub/n; echo t2 > /tmp/t.txt; cd sub; export VENV=/opt/v",
    );
    const handle = stored(await runtime.saveSnapshot(box, store, "i-t1"));
    // big.bin stayed in the container: linked from the first tree on this machine
    expect(handle.transferredBytes ?? Number.POSITIVE_INFINITY).toBeLessThan(200_000);
    await runtime.release(box, true);
    expect(await store.prune((id) => id === first.id)).toEqual([first.id]);
    // a runtime of its own (as after a crash): nothing but the stored tree is read
    const other = makeRuntime();
    try {
      const there = await other.acquire(files, { rolloutId: `i${++n}`, restore: handle });
      expect(
        await out(
          there,
          "pwd; cat f n; cd .. && cat keep.txt && stat -c %a keep.txt; [ -e gone.txt ] && echo gone-is-back; " +
            "cat from-image.txt /tmp/t.txt /logs/agent/l.txt; md5sum -c big.md5; printenv VENV",
        ),
      ).toBe(`${there.workspace}/sub\nc\nnew\na2\n640\nimage\nt2\nlog\nbig.bin: OK\n/opt/v\n`);
      await other.release(there, true);
    } finally {
      await other.close();
    }
    expect(await labelledContainers(docker, runName)).toHaveLength(0);
  }, 300_000);

  test("symlinks are stored and restored as links, never followed on this machine or in the container", async () => {
    const canary = join(store.dir, "canary");
    writeFileSync(canary, "host\n");
    const box = await runtime.acquire(files, { rolloutId: `i${++n}` });
    await out(
      box,
      `ln -s ${canary} canary-link; ln -s /etc etc-link; ln -s ${store.dir} /tmp/store-link; ` +
        "ln -s /etc/hostname /logs/agent/host-link; echo real > /tmp/real",
    );
    await runtime.saveSnapshot(box, store, "s-t0");
    await out(box, "echo more > more.txt");
    const handle = await runtime.saveSnapshot(box, store, "s-t1");
    await runtime.release(box, true);
    const links: Array<[string, string]> = [
      ["workspace/canary-link", canary],
      ["workspace/etc-link", "/etc"],
      ["outside/0/store-link", store.dir],
      ["outside/2/host-link", "/etc/hostname"],
    ];
    for (const [name, target] of links) {
      expect(lstatSync(join(handle.path, name)).isSymbolicLink()).toBe(true);
      expect(readlinkSync(join(handle.path, name))).toBe(target);
    }
    expect(readFileSync(canary, "utf8")).toBe("host\n");
    const there = await runtime.acquire(files, { rolloutId: `i${++n}`, restore: handle });
    expect(
      await out(
        there,
        "readlink canary-link etc-link /tmp/store-link /logs/agent/host-link; cat /tmp/real more.txt; [ -d /etc ] && [ ! -L /etc ] && echo etc-intact",
      ),
    ).toBe(`${canary}\n/etc\n${store.dir}\n/etc/hostname\nreal\nmore\netc-intact\n`);
    await runtime.release(there, true);
    expect(readFileSync(canary, "utf8")).toBe("host\n");
  }, 300_000);

  test("an image without GNU find stores today's full WORKDIR tar, which restores", async () => {
    const bare = environmentTask("docker", IMAGE);
    const build = bare.environment?.build;
    if (!build) throw new Error("environmentTask made no build");
    appendFileSync(join(build.context, "Dockerfile"), "RUN rm /usr/bin/find\n");
    const task = { ...bare, key: `${bare.key}-no-find` };
    try {
      const box = await runtime.acquire(task, { rolloutId: `i${++n}` });
      await out(box, "echo kept > kept.txt; export KEPT=1");
      const handle = await runtime.saveSnapshot(box, store, "f-t0");
      expect(handle.format).toBe("tar");
      await runtime.release(box, true);
      const there = await runtime.acquire(task, { rolloutId: `i${++n}`, restore: handle });
      expect(await out(there, "cat kept.txt from-image.txt; printenv KEPT")).toBe("kept\nimage\n1\n");
      await runtime.release(there, true);
    } finally {
      bare.remove();
    }
  }, 300_000);

  test("a non-root agent: root's files in /tmp are not stored, its agent processes go on, the WORKDIR's owners come back", async () => {
    const own = environmentTask("docker", IMAGE);
    const build = own.environment?.build;
    if (!build) throw new Error("environmentTask made no build");
    // the agent owns the WORKDIR but for a file and a directory of root's (the image's) and a file of nobody's
    appendFileSync(
      join(build.context, "Dockerfile"),
      "RUN chown -R agent /srv/task && echo r > root-file && mkdir root-dir && echo n > root-dir/nobody-file && " +
        "chown nobody:nogroup root-dir/nobody-file && chown root:root root-file root-dir\n",
    );
    const task = { ...own, key: `${own.key}-agent`, environment: { ...own.environment, user: "agent" } };
    try {
      const box = await runtime.acquire(task, { rolloutId: `i${++n}` });
      expect(box).toBeInstanceOf(ImageSandbox);
      // root's secret in /tmp (as another user's file would be), an agent process left running
      await (box as ImageSandbox).container
        .exec({ Cmd: ["sh", "-c", "echo secret > /tmp/root-secret"], User: "root" })
        .then((e) => e.start({}))
        .then((stream) => new Promise((resolve) => stream.on("end", resolve).resume()));
      await out(box, "echo mine > /tmp/mine; echo w > w.txt; (sleep 600 &) ; true");
      const handle = await runtime.saveSnapshot(box, store, "a-t0");
      expect(await out(box, "whoami; ps -o stat= -p $(pgrep -u agent -x sleep) | cut -c1")).toBe(
        "agent\nS\n",
      );
      await runtime.release(box, true);
      expect(readFileSync(join(handle.path, "outside", "0", "mine"), "utf8")).toBe("mine\n");
      expect(() => lstatSync(join(handle.path, "outside", "0", "root-secret"))).toThrow();
      const there = await runtime.acquire(task, { rolloutId: `i${++n}`, restore: handle });
      expect(
        await out(
          there,
          "stat -c %U w.txt from-image.txt /tmp/mine . root-file root-dir root-dir/nobody-file; cat w.txt; " +
            "[ -e /tmp/root-secret ] || echo no-secret; { echo x > root-file; } 2>/dev/null || echo refused; touch root-dir/x 2>/dev/null || echo refused",
        ),
      ).toBe("agent\nagent\nagent\nagent\nroot\nroot\nnobody\nw\nno-secret\nrefused\nrefused\n");
      await runtime.release(there, true);
    } finally {
      own.remove();
    }
  }, 300_000);
});
