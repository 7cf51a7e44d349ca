import type Docker from "dockerode";
import { withTimeout } from "./docker-client.ts";
import { ensureImage, ImageBuildError } from "./image-build.ts";
import {
  CONTROL_TIMEOUT_MS,
  commitContainer,
  type ImagePlan,
  startImageContainer,
} from "./image-container.ts";
import { ImageSandbox } from "./image-sandbox.ts";
import { restoreShell, snapshotAsTar } from "./snapshot-tar.ts";
import type { AcquireOptions, TaskFiles } from "./types.ts";

/** True when the task brings its own image (`environment.image` or `environment.build`). */
export function isImageTask(files: TaskFiles): boolean {
  return files.environment?.image !== undefined || files.environment?.build !== undefined;
}

/** What the docker runtime's own settings give a task that does not say. */
export interface ImageDefaults {
  runName: string;
  pidsLimit: number;
  cpus: number;
  memoryMb: number;
}

/**
 * The docker runtime's sandboxes of tasks with their own image (Harbor's shape): the image built or found once
 * per task on this engine, a fresh container per sandbox (never pooled: the whole filesystem is the agent's
 * state), forks as a commit of the live container and a new container of it. A stored snapshot
 * (`DockerRuntime.saveSnapshot`, `ImageSandbox.saveTree`) is a tree on this machine of the WORKDIR, /tmp, /var/tmp
 * and the task's writable dirs, of which only what changed since the sandbox's last one left the container (a full
 * WORKDIR tar where the image lacks GNU find and tar), and the shell's directory: any other path is the image's
 * again after a restore, on any Docker host (a fork, made in the same process, carries the whole filesystem).
 */
export class ImageSandboxes {
  private readonly plans = new Map<string, Promise<ImagePlan>>();
  private readonly live = new Set<ImageSandbox>();

  constructor(
    private readonly docker: Docker,
    private readonly defaults: ImageDefaults,
  ) {}

  /** The task's image on this engine (built once per content and base ids), its WORKDIR, users and limits. */
  plan(files: TaskFiles): Promise<ImagePlan> {
    let entry = this.plans.get(files.key);
    if (!entry) {
      entry = this.makePlan(files);
      entry.catch(() => this.plans.delete(files.key));
      this.plans.set(files.key, entry);
    }
    return entry;
  }

  private async makePlan(files: TaskFiles): Promise<ImagePlan> {
    const env = files.environment ?? {};
    const image = env.build ? await ensureImage(this.docker, env.build) : (env.image as string);
    const info = await withTimeout(
      this.docker.getImage(image).inspect(),
      30_000,
      "docker image inspect",
    ).catch(() => {
      throw new ImageBuildError(
        "image",
        `image ${image} is not in the engine's image store (images are never pulled)`,
        [image],
      );
    });
    const imageUser = info.Config?.User || "root";
    return {
      image,
      workdir: env.workdir ?? (info.Config?.WorkingDir || "/"),
      user: env.user ?? imageUser,
      imageUser,
      network: env.network ?? "none",
      memoryMb: env.memoryMb ?? this.defaults.memoryMb,
      cpus: env.cpus ?? this.defaults.cpus,
      pidsLimit: this.defaults.pidsLimit,
      env: Object.entries(env.env ?? {}).map(([k, v]) => `${k}=${v}`),
      dirs: env.dirs ?? [],
      runName: this.defaults.runName,
    };
  }

  async prepare(files: TaskFiles): Promise<string> {
    return `image ${(await this.plan(files)).image}`;
  }

  /**
   * A fresh container of the task's image; with `snapshot` or a stored `restore` (read before any container
   * starts: a missing one throws `SnapshotUnavailableError`), its WORKDIR laid from that tar (a tree's packed here,
   * its outside dirs laid too) and the shell in the snapshot's directory (the WORKDIR when that is gone).
   */
  async acquire(files: TaskFiles, options: AcquireOptions): Promise<ImageSandbox> {
    const snapshot = options.restore ? await snapshotAsTar(options.restore) : options.snapshot;
    const plan = await this.plan(files);
    const { container, keep } = await startImageContainer(this.docker, plan, plan.image, options.rolloutId);
    const box = new ImageSandbox(this.docker, container, keep, plan, files, options.rolloutId);
    const tree = options.restore?.format === "tree" ? options.restore : undefined;
    const started = await this.started(box, { fresh: snapshot === undefined, snapshot, tree });
    if (!options.restore) return started;
    try {
      await restoreShell(started, options.restore);
    } catch (error) {
      await this.release(started);
      throw error;
    }
    return started;
  }

  /** A new container of `from`'s filesystem now (committed, paused while committing), its shell in `from`'s directory. */
  async fork(from: ImageSandbox, options: AcquireOptions): Promise<ImageSandbox> {
    const image = await commitContainer(from.container, "docker commit for a fork", CONTROL_TIMEOUT_MS * 5);
    let box: ImageSandbox;
    try {
      const { container, keep } = await startImageContainer(this.docker, from.plan, image, options.rolloutId);
      box = new ImageSandbox(this.docker, container, keep, from.plan, from.files, options.rolloutId, image);
    } catch (error) {
      await this.docker
        .getImage(image)
        .remove({ force: true })
        .catch(() => undefined);
      throw error;
    }
    return this.started(box, { fresh: false, cwd: from.currentCwd });
  }

  private async started(box: ImageSandbox, init: Parameters<ImageSandbox["init"]>[0]): Promise<ImageSandbox> {
    try {
      await box.init(init);
    } catch (error) {
      await box.destroy();
      throw error;
    }
    this.live.add(box);
    return box;
  }

  async release(box: ImageSandbox): Promise<void> {
    this.live.delete(box);
    await box.destroy();
  }

  /** Sandboxes of this kind open now. */
  get openCount(): number {
    return this.live.size;
  }

  async close(): Promise<void> {
    const all = [...this.live];
    this.live.clear();
    await Promise.all(all.map((box) => box.destroy()));
  }
}
