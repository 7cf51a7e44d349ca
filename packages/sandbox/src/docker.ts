import type Docker from "dockerode";
import { dockerClient } from "./docker-client.ts";
import type { DockerRuntimeOptions } from "./docker-options.ts";
import { DockerSandbox } from "./docker-sandbox.ts";
import { sandboxHostConfig } from "./image-container.ts";
import { ImageSandboxes, isImageTask } from "./image-runtime.ts";
import { ImageSandbox } from "./image-sandbox.ts";
import { runProcess } from "./process.ts";
import { carryExports } from "./shell-exports.ts";
import type { SnapshotStore } from "./snapshot-store.ts";
import { restoreShell, snapshotAsTar } from "./snapshot-tar.ts";
import { containerLabels } from "./teardown.ts";
import type { AcquireOptions, Runtime, Sandbox, SnapshotHandle, TaskFiles } from "./types.ts";

/**
 * One container per rollout, never shared between concurrent rollouts; released containers go to a warm
 * pool and are reset (agent processes killed, workspace rebuilt from a root-only copy) before reuse.
 * @example
 * const runtime = new DockerRuntime({ image: "air-mlgym-test:latest", user: "agent", ... });
 * const sandbox = await runtime.acquire(files, { rolloutId: "r1" });
 */
export class DockerRuntime implements Runtime {
  readonly kind = "docker" as const;
  readonly docker: Docker;
  private readonly idle: DockerSandbox[] = [];
  private readonly busy = new Set<DockerSandbox>();
  private created = 0;
  private closed = false;

  /** Sandboxes of tasks with their own image (`TaskFiles.environment`: Harbor's shape). */
  private readonly images: ImageSandboxes;

  constructor(private readonly options: DockerRuntimeOptions) {
    this.docker = options.docker ?? dockerClient();
    this.images = new ImageSandboxes(this.docker, options);
  }

  /** A task with its own image: built (or found) on this engine; else nothing to do. */
  async prepareTask(files: TaskFiles): Promise<string> {
    return isImageTask(files) ? this.images.prepare(files) : `image ${this.options.image}`;
  }

  async acquire(files: TaskFiles, options: AcquireOptions): Promise<Sandbox> {
    if (this.closed) throw new Error("docker runtime is closed");
    if (isImageTask(files)) return this.announce(await this.images.acquire(files, options), options);
    const restored = options.restore && { ...options, snapshot: await snapshotAsTar(options.restore) };
    let sandbox: DockerSandbox | undefined;
    while (!sandbox && this.idle.length > 0) {
      // Prefer a container that staged this task's workspace when it was parked.
      const staged = this.idle.findLastIndex((s) => s.stagedFor === files.key);
      const candidate = (staged >= 0 ? this.idle.splice(staged, 1)[0] : this.idle.pop()) as DockerSandbox;
      if (await candidate.alive()) sandbox = candidate;
      else void this.destroy(candidate);
    }
    sandbox ??= await this.createWhenUp(options.rolloutId, options.signal);
    this.busy.add(sandbox);
    try {
      await sandbox.reset(files, restored ?? options, await this.bundle(files, sandbox));
      if (options.restore) await restoreShell(sandbox, options.restore);
    } catch (error) {
      this.busy.delete(sandbox);
      void this.destroy(sandbox);
      throw error;
    }
    this.options.onState?.({ id: sandbox.id, rolloutId: options.rolloutId, state: "busy" });
    return sandbox;
  }

  /**
   * A copy of live `from` (tree rollouts): a task with its own image forks as a commit of the container and a
   * new container of it (the whole filesystem); a workspace task as a new sandbox of `from`'s snapshot. Its shell
   * gets `from`'s exported variables.
   */
  async fork(from: Sandbox, files: TaskFiles, options: AcquireOptions): Promise<Sandbox> {
    if (this.closed) throw new Error("docker runtime is closed");
    const box =
      from instanceof ImageSandbox
        ? this.announce(await this.images.fork(from, options), options)
        : await this.acquire(files, { ...options, snapshot: await from.snapshot() });
    await carryExports(from, box).catch(async (error) => {
      await this.release(box, true);
      throw error;
    });
    return box;
  }

  private announce(sandbox: Sandbox, options: AcquireOptions): Sandbox {
    this.options.onState?.({ id: sandbox.id, rolloutId: options.rolloutId, state: "busy" });
    return sandbox;
  }

  /** Sandboxes in use now (tasks with their own image included). */
  get openCount(): number {
    return this.busy.size + this.images.openCount;
  }

  async release(sandbox: Sandbox, discard = false): Promise<void> {
    if (sandbox instanceof ImageSandbox) {
      await this.images.release(sandbox);
      this.options.onState?.({ id: sandbox.id, state: "removed" });
      return;
    }
    const box = sandbox as DockerSandbox;
    this.busy.delete(box);
    if (!discard && !this.closed && this.idle.length < this.options.poolSize && (await box.alive())) {
      await box.park().catch(() => {
        discard = true;
      });
      if (!discard) {
        this.idle.push(box);
        this.options.onState?.({ id: box.id, state: "idle" });
        return;
      }
    }
    await this.destroy(box);
  }

  /**
   * Stores the sandbox's workspace and its shell's directory on this machine, so a runtime on any host restores it:
   * a workspace sandbox as a tree of which only what changed since its last snapshot left the container
   * (`DockerSandbox.saveTree`), a task with its own image likewise (`ImageSandbox.saveTree`).
   */
  saveSnapshot(sandbox: Sandbox, store: SnapshotStore, id: string): Promise<SnapshotHandle> {
    if (sandbox instanceof ImageSandbox) return sandbox.saveTree(store, id);
    if (sandbox instanceof DockerSandbox) return sandbox.saveTree(store, id);
    return Promise.reject(new Error("not a sandbox of this docker runtime"));
  }

  /** Containers created so far (for tests and the pool view). */
  get containersCreated(): number {
    return this.created;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.idle.splice(0), ...this.busy];
    this.busy.clear();
    await Promise.all([...all.map((s) => this.destroy(s)), this.images.close()]);
  }

  /**
   * A new container. When creating fails because the engine does not answer (dockerd restarting), waits for it
   * (`ping` every 0.5 s, at most `timeoutMs`) and tries once more; any other failure is thrown at once.
   */
  private async createWhenUp(rolloutId: string, signal?: AbortSignal): Promise<DockerSandbox> {
    try {
      return await this.create(rolloutId);
    } catch (error) {
      if (!(await this.waitForEngine(signal))) throw error;
      return this.create(rolloutId);
    }
  }

  /** True once an engine that did not answer answers again; false when it answered at once or never did. */
  private async waitForEngine(signal?: AbortSignal): Promise<boolean> {
    const until = Date.now() + this.options.timeoutMs;
    let wasDown = false;
    while (Date.now() < until && !signal?.aborted && !this.closed) {
      try {
        await Promise.race([
          this.docker.ping(),
          Bun.sleep(5000).then(() => Promise.reject(new Error("ping timed out"))),
        ]);
        return wasDown;
      } catch {
        wasDown = true;
      }
      await Bun.sleep(500);
    }
    return false;
  }

  private async create(rolloutId: string): Promise<DockerSandbox> {
    const o = this.options;
    if (!o.image)
      throw new Error(
        "this docker runtime has no image: each task must bring its own (TaskFiles.environment)",
      );
    const container = await this.docker.createContainer({
      Image: o.image,
      Entrypoint: [],
      Cmd: ["sleep", "infinity"],
      User: "root",
      WorkingDir: "/",
      Labels: containerLabels(o.runName, rolloutId),
      HostConfig: {
        ...sandboxHostConfig(o),
        DeviceRequests:
          o.gpuIds.length > 0
            ? [{ Driver: "nvidia", DeviceIDs: o.gpuIds, Capabilities: [["gpu"]] }]
            : undefined,
      },
    });
    this.created++;
    const sandbox = new DockerSandbox(container, o);
    try {
      await container.start();
      await sandbox.init();
    } catch (error) {
      await container.remove({ force: true }).catch(() => undefined);
      throw error;
    }
    o.onState?.({ id: sandbox.id, rolloutId, state: "created" });
    return sandbox;
  }

  private async destroy(sandbox: DockerSandbox): Promise<void> {
    await sandbox.destroy();
    this.options.onState?.({ id: sandbox.id, state: "removed" });
  }

  private readonly bundles = new Map<string, Promise<Uint8Array>>();

  /** Tar of the task bundle (`workspace/`, `evaluation/`), made once per task and sent once per container. */
  private bundle(files: TaskFiles, sandbox: DockerSandbox): Promise<Uint8Array | undefined> {
    if (sandbox.hasBundle(files.key)) return Promise.resolve(undefined);
    let tar = this.bundles.get(files.key);
    if (!tar) {
      tar = runProcess(["tar", "-cf", "-", "-C", files.dir, "workspace", "evaluation"], {
        cwd: files.dir,
        timeoutMs: 60_000,
      }).then((out) => {
        if (out.exitCode !== 0) throw new Error(`packing ${files.dir} failed: ${out.stderr}`);
        return out.stdoutBytes;
      });
      this.bundles.set(files.key, tar);
    }
    return tar;
  }
}
