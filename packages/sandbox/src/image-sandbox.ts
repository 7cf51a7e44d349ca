import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import { withTimeout } from "./docker-client.ts";
import { execOnce, rootScript, tarOf } from "./docker-exec.ts";
import { type ContainerShell, openContainerShell } from "./docker-shell.ts";
import { onlyFileOfTar } from "./docker-tar.ts";
import {
  CONTROL_TIMEOUT_MS,
  commitContainer,
  type ImagePlan,
  killAllScript,
  PRIVATE,
  putFolders,
  startImageContainer,
} from "./image-container.ts";
import { restoreImageOwners } from "./image-owners.ts";
import { ImageSnapshots, restoreImageOutside } from "./image-snapshot.ts";
import { execWithTimeout, shellQuote } from "./shell.ts";
import { readExports } from "./shell-exports.ts";
import type { SnapshotHandle } from "./snapshot-handle.ts";
import type { SnapshotStore } from "./snapshot-store.ts";
import { saveTarSnapshot } from "./snapshot-tar.ts";
import type {
  EvaluationOutput,
  EvaluationRequest,
  ExecResult,
  RunRequest,
  Sandbox,
  TaskFiles,
} from "./types.ts";

/** A folder's entries, or none when it does not exist. */
function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * A container of a task's own image (Harbor's shape): the whole filesystem is the agent's state, the agent's
 * persistent shell runs as the task's user in the WORKDIR, and an evaluation runs in a *new* container of this
 * one's committed filesystem (no agent process survives into it), with its folders copied in and its collect
 * directory made empty first.
 */
export class ImageSandbox implements Sandbox {
  readonly id: string;
  readonly workspace: string;
  private shell: ContainerShell | undefined;
  private cwd: string;
  private readonly stored: ImageSnapshots;

  constructor(
    private readonly docker: Docker,
    readonly container: Docker.Container,
    private readonly keep: string,
    readonly plan: ImagePlan,
    readonly files: TaskFiles,
    private readonly rolloutId: string,
    /** An image made for this sandbox alone (a fork's), removed with it. */
    private readonly ownImage?: string,
  ) {
    this.id = container.id.slice(0, 12);
    this.workspace = plan.workdir;
    this.cwd = plan.workdir;
    this.stored = new ImageSnapshots(container, keep, plan);
  }

  /**
   * Makes the environment's directories, lays the bundle's `workspace/` (when it has files) or `snapshot` into
   * the WORKDIR, locks the read-only paths, and starts the agent's shell in `cwd`. A `snapshot` packed from the
   * stored tree `tree` (made on this machine) is then owned by the agent but for the entries whose other owners the
   * tree recorded, and the tree's outside dirs laid out.
   */
  async init(options: {
    snapshot?: Uint8Array;
    fresh: boolean;
    cwd?: string;
    tree?: SnapshotHandle;
  }): Promise<void> {
    const dirs = this.plan.dirs.map(shellQuote).join(" ");
    if (dirs) await rootScript(this.container, `mkdir -p ${dirs} && chmod 777 ${dirs}`, CONTROL_TIMEOUT_MS);
    const ws = shellQuote(this.workspace);
    if (options.snapshot) {
      await rootScript(this.container, `rm -rf ${ws} && mkdir -p ${ws}`, CONTROL_TIMEOUT_MS);
      await this.put(options.snapshot, this.workspace);
      if (options.tree) {
        await rootScript(this.container, `chown -hR ${shellQuote(this.plan.user)} ${ws}`, CONTROL_TIMEOUT_MS);
        const root = (script: string) => rootScript(this.container, script, CONTROL_TIMEOUT_MS);
        await restoreImageOwners(this.container, this.plan, options.tree, root);
        await restoreImageOutside(this.container, this.plan, options.tree, root);
      }
    } else if (options.fresh && entries(join(this.files.dir, "workspace")).length > 0) {
      await rootScript(this.container, `mkdir -p ${ws}`, CONTROL_TIMEOUT_MS);
      await this.put(await tarOf(join(this.files.dir, "workspace")), this.workspace);
      await rootScript(this.container, `chown -R ${shellQuote(this.plan.user)} ${ws}`, CONTROL_TIMEOUT_MS);
    }
    const ro = this.files.readOnly.map((p) => shellQuote(`${this.workspace}/${p}`)).join(" ");
    if (options.snapshot) await this.relayReadOnly();
    if (ro && (options.fresh || options.snapshot))
      await rootScript(
        this.container,
        `for p in ${ro}; do [ -e "$p" ] && chown -R root:root "$p" && chmod -R a-w,a+rX "$p"; done; true`,
        CONTROL_TIMEOUT_MS,
      );
    await this.startShell(options.cwd ?? this.workspace);
  }

  /** After a snapshot: the read-only paths come from the bundle again (a snapshot leaves them out). */
  private async relayReadOnly(): Promise<void> {
    const bundle = join(this.files.dir, "workspace");
    const there = this.files.readOnly.filter((p) => existsSync(join(bundle, p)));
    if (there.length > 0) await this.put(await tarOf(bundle, there), this.workspace);
  }

  private async put(tar: Uint8Array, path: string): Promise<void> {
    await withTimeout(
      this.container.putArchive(Buffer.from(tar), { path }),
      CONTROL_TIMEOUT_MS,
      "putArchive",
    );
  }

  private async startShell(cwd: string): Promise<void> {
    this.shell?.close();
    this.shell = await openContainerShell(this.container, {
      user: this.plan.user,
      cwd,
      env: [...this.plan.env, "LANG=C.UTF-8"],
      timeoutMs: CONTROL_TIMEOUT_MS,
    });
    this.cwd = cwd;
  }

  private async existingCwd(): Promise<string> {
    const out = await rootScript(
      this.container,
      `[ -d ${shellQuote(this.cwd)} ] && printf %s ${shellQuote(this.cwd)} || printf %s ${shellQuote(this.workspace)}`,
      CONTROL_TIMEOUT_MS,
    );
    return out || this.workspace;
  }

  /** The agent's shell's directory now (a fork starts there). */
  get currentCwd(): string {
    return this.cwd;
  }

  async exec(command: string, timeoutMs: number): Promise<ExecResult> {
    if (!this.shell) await this.startShell(await this.existingCwd());
    const shell = this.shell as ContainerShell;
    const result = await execWithTimeout(shell.shell, command, timeoutMs, this.cwd, {
      restart: async () => {
        await this.startShell(await this.existingCwd());
        return this.cwd;
      },
      killAndRestart: async () => {
        await rootScript(this.container, killAllScript(this.keep), CONTROL_TIMEOUT_MS);
        await this.startShell(await this.existingCwd());
        return this.cwd;
      },
    });
    this.cwd = result.cwd || this.cwd;
    return result;
  }

  /** The folders copied in, the command run in the agent's shell (in a subshell, with `env`), the folders removed. */
  async run(request: RunRequest): Promise<ExecResult> {
    await putFolders(this.container, request.folders);
    const env = Object.entries(request.env ?? {}).map(([k, v]) => `${k}=${shellQuote(v)}`);
    try {
      return await this.exec(
        `(${env.length ? `export ${env.join(" ")}; ` : ""}${request.command})`,
        request.timeoutMs,
      );
    } finally {
      const dests = request.folders.map((f) => shellQuote(f.dest)).join(" ");
      if (dests) await rootScript(this.container, `rm -rf ${dests}`, CONTROL_TIMEOUT_MS);
    }
  }

  /**
   * Commits this container (paused while committing), starts a new container of that image (no agent process
   * survives into it), empties `collect.dir`, copies the folders in (root-owned) and the bundle's `evaluation/`
   * files over the WORKDIR, runs the command as `user` (default the image's USER) in the WORKDIR, and reads
   * the collected files. The container and the image are removed after; past `timeoutMs` the command is
   * stopped with its container.
   */
  async evaluate(request: EvaluationRequest): Promise<EvaluationOutput> {
    const image = await commitContainer(
      this.container,
      "docker commit of the agent's container",
      request.timeoutMs + CONTROL_TIMEOUT_MS,
    );
    let box: Docker.Container | undefined;
    try {
      box = (await startImageContainer(this.docker, this.plan, image, `${this.rolloutId}-evaluation`))
        .container;
      const collect = request.collect?.dir;
      if (collect) {
        const c = shellQuote(collect);
        await rootScript(box, `rm -rf ${c} && mkdir -p ${c} && chmod 777 ${c}`, CONTROL_TIMEOUT_MS);
      }
      await putFolders(box, request.folders ?? []);
      const evaluation = join(this.files.dir, "evaluation");
      if (entries(evaluation).length > 0)
        await withTimeout(
          box.putArchive(await tarOf(evaluation), { path: this.workspace }),
          CONTROL_TIMEOUT_MS,
          "putArchive evaluation",
        );
      const env = Object.entries(request.env ?? {}).map(([k, v]) => `${k}=${v}`);
      const run = await execOnce(box, ["sh", "-c", request.command], {
        user: request.user ?? this.plan.imageUser,
        cwd: this.workspace,
        env: [...this.plan.env, ...env],
        timeoutMs: request.timeoutMs,
      });
      if (run.timedOut) return { stdout: run.stdout, stderr: run.stderr, exitCode: 137, timedOut: true };
      const collected: Record<string, string> = {};
      for (const name of request.collect?.files ?? []) {
        const path = shellQuote(`${collect}/${name}`);
        const r = await execOnce(box, ["sh", "-c", `[ -f ${path} ] && base64 ${path}`], {
          user: "root",
          timeoutMs: CONTROL_TIMEOUT_MS,
        });
        if (r.exitCode === 0)
          collected[name] = Buffer.from(r.stdout.replace(/\s+/g, ""), "base64").toString("utf8");
      }
      return { stdout: run.stdout, stderr: run.stderr, exitCode: run.exitCode, timedOut: false, collected };
    } finally {
      await box?.remove({ force: true, v: true }).catch(() => undefined);
      await this.docker
        .getImage(image)
        .remove({ force: true, noprune: false })
        .catch(() => undefined);
    }
  }

  /** Tar of the WORKDIR without the read-only paths, made by root into a root-only file and fetched whole. */
  async snapshot(): Promise<Uint8Array> {
    const ws = shellQuote(this.workspace);
    const file = `${PRIVATE}/snapshot.tar`;
    const excludes = this.files.readOnly.map((p) => `--exclude=${shellQuote(`./${p}`)}`).join(" ");
    await rootScript(
      this.container,
      `mkdir -p ${PRIVATE} && chmod 700 ${PRIVATE} && tar -C ${ws} --anchored ${excludes} -cf ${file} .`,
      CONTROL_TIMEOUT_MS,
    );
    try {
      const stream = await withTimeout(
        this.container.getArchive({ path: file }),
        CONTROL_TIMEOUT_MS,
        "getArchive",
      );
      const chunks: Buffer[] = [];
      for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
      return onlyFileOfTar(Buffer.concat(chunks));
    } finally {
      await rootScript(this.container, `rm -f ${file}`, CONTROL_TIMEOUT_MS).catch(() => undefined);
    }
  }

  /**
   * Stores the WORKDIR and the agent's outside dirs as a tree in `store` (`ImageSnapshots`: only what changed since
   * this sandbox's last stored tree leaves the container); an image lacking the tools stores a full WORKDIR tar.
   */
  async saveTree(store: SnapshotStore, id: string): Promise<SnapshotHandle> {
    if (await this.stored.available())
      return this.stored.save(store, id, this.files, this.cwd, readExports(this));
    return saveTarSnapshot(this, this.cwd, store, id);
  }

  async alive(): Promise<boolean> {
    try {
      const info = await withTimeout(this.container.inspect(), 10_000, "inspect");
      return info.State.Running === true;
    } catch {
      return false;
    }
  }

  async writtenBytes(): Promise<number | undefined> {
    // dockerode's types lack inspect's `size` option; the Engine API takes it (GET /containers/{id}/json?size=1).
    const inspect = this.container.inspect.bind(this.container) as unknown as (o: {
      size: boolean;
    }) => Promise<{ SizeRw?: number }>;
    const info = await withTimeout(inspect({ size: true }), CONTROL_TIMEOUT_MS, "docker inspect");
    return info.SizeRw;
  }

  async destroy(): Promise<void> {
    this.shell?.close();
    this.shell = undefined;
    await withTimeout(this.container.remove({ force: true, v: true }), 30_000, "docker remove").catch(
      () => undefined,
    );
    if (this.ownImage)
      await this.docker
        .getImage(this.ownImage)
        .remove({ force: true })
        .catch(() => undefined);
  }
}
