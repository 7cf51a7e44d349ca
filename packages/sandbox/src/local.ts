import { randomBytes } from "node:crypto";
import { chmod, mkdir } from "node:fs/promises";
import { join } from "node:path";
import {
  assertBwrapWorks,
  type BwrapSpec,
  interpreterPaths,
  SANDBOX_UID,
  SANDBOX_WORKSPACE,
} from "./bwrap.ts";
import { makeHostDirs, type SandboxHost } from "./local-host.ts";
import { LocalSandbox } from "./local-sandbox.ts";
import { probeUid, UidPool } from "./local-uids.ts";
import { chownTree } from "./process.ts";
import { copyWorkspace, makeShareable, placeholders } from "./shared.ts";
import { applyExports, carryExports, readExports } from "./shell-exports.ts";
import { assertRestorable, readSnapshotTar, type SnapshotStore } from "./snapshot-store.ts";
import type { AcquireOptions, Runtime, Sandbox, SnapshotHandle, TaskFiles } from "./types.ts";

export interface LocalRuntimeOptions {
  /** Directory holding one sub-directory per sandbox and the evaluation copies (never visible to a sandbox). */
  root: string;
  /** Interpreter behind the agent's `python`/`python3` and the evaluation's. */
  python: string;
  /** Processes (threads count too) one sandbox may run. Default 1024. */
  maxProcesses?: number;
  /** Data-segment limit per process in MiB. Default 8192. */
  memoryMb?: number;
  /** Prepare the next sandbox of a task (fresh copy, started shell) while the current rollout runs. Default true. */
  stageNext?: boolean;
  /**
   * Most staged sandboxes kept per task. The runtime stages as many as the task has live sandboxes (a step's
   * rollouts of one task start together), up to this. Default 8.
   */
  maxStaged?: number;
  /** Shell text run once in every new agent shell before its first command (e.g. an env's guard functions). */
  agentInit?: string;
  onState?: (state: { id: string; rolloutId?: string; state: string; command?: string }) => void;
}

/** What a new sandbox's workspace starts from: a workspace tar or a stored tree, and the shell's directory. */
type Prepared = { tar: Uint8Array; cwd?: string } | { tree: string; cwd: string; outside?: string[] };

/**
 * Sandboxes on this machine, each a bubblewrap namespace: the agent sees its workspace at
 * /home/agent/workspace (writable), a private /tmp (a host directory of its own) and /dev/shm, the system
 * read-only, no network, its own PID namespace, nothing of the run dir, the MLGym root, other sandboxes or the
 * host's home. Evaluations run in a separate bwrap over a fresh copy with pristine evaluation files (see
 * {@link LocalSandbox.evaluate}).
 * When air runs as root, each sandbox gets its own unprivileged host uid and evaluations another one.
 * @example
 * const runtime = new LocalRuntime({ root: "/tmp/air-sandboxes", python: "/usr/bin/python3" });
 * const sandbox = await runtime.acquire(files, { rolloutId: "r1" });
 * await sandbox.exec("ls", 10_000);
 */
export class LocalRuntime implements Runtime {
  readonly kind = "local" as const;
  private readonly live = new Set<LocalSandbox>();
  private readonly spares = new Map<string, Promise<LocalSandbox>[]>();
  /** Sandboxes with an empty workspace and the shell started, per task bundle, for the next forks. */
  private readonly blanks = new Map<string, Promise<LocalSandbox>[]>();
  private readonly removals = new Set<Promise<void>>();
  private readonly asRoot = process.getuid?.() === 0;
  private readonly uids = new UidPool(this.asRoot);
  private ready: Promise<string[]> | undefined;
  private counter = 0;
  private closed = false;

  constructor(private readonly options: LocalRuntimeOptions) {}

  /**
   * Checks once that bwrap can start a sandbox here and finds the interpreter's paths; throws a clear error
   * (naming runtime = "docker" and local.isolation = "none") when it cannot.
   */
  check(): Promise<string[]> {
    this.ready ??= (async () => {
      await assertBwrapWorks(this.asRoot ? { kind: "setpriv", uid: probeUid() } : { kind: "userns" });
      await mkdir(join(this.options.root, "evaluations"), { recursive: true, mode: 0o700 });
      await chmod(this.options.root, 0o700);
      return interpreterPaths(this.options.python);
    })();
    return this.ready;
  }

  async acquire(files: TaskFiles, options: AcquireOptions): Promise<Sandbox> {
    if (this.closed) throw new Error("local runtime is closed");
    let sandbox: LocalSandbox | undefined;
    const stage = this.options.stageNext !== false && !options.snapshot && !options.restore;
    const spare = stage ? this.spares.get(files.key)?.shift() : undefined;
    if (spare) {
      sandbox = await spare.catch(() => undefined);
      if (sandbox && !(await sandbox.alive())) {
        this.remove(sandbox);
        sandbox = undefined;
      }
    }
    if (options.restore) assertRestorable(options.restore);
    const from: Prepared | undefined = options.restore
      ? options.restore.format === "tree"
        ? { tree: options.restore.path, cwd: options.restore.cwd, outside: options.restore.outside }
        : { tar: await readSnapshotTar(options.restore), cwd: options.restore.cwd }
      : options.snapshot && { tar: options.snapshot };
    sandbox ??= await this.prepare(files, from);
    if (options.restore?.exports !== undefined)
      await applyExports(sandbox, options.restore.exports).catch((error) => {
        this.remove(sandbox as LocalSandbox);
        throw error;
      });
    this.live.add(sandbox);
    if (stage && !this.closed) this.stage(files);
    this.options.onState?.({ id: sandbox.id, rolloutId: options.rolloutId, state: "ready" });
    return sandbox;
  }

  /**
   * A new sandbox whose workspace is a copy of `from`'s now (tree rollouts): a staged blank sandbox (empty
   * workspace, shell up) gets the copy (`LocalSandbox.copyFrom`; the shared read-only paths are mounted, not
   * copied), and the next blank is staged behind it.
   */
  async fork(from: Sandbox, files: TaskFiles, options: AcquireOptions): Promise<Sandbox> {
    if (this.closed) throw new Error("local runtime is closed");
    const parent = from as LocalSandbox;
    let sandbox = await this.blanks
      .get(files.key)
      ?.shift()
      ?.catch(() => undefined);
    if (sandbox && !(await sandbox.alive())) {
      this.remove(sandbox);
      sandbox = undefined;
    }
    sandbox ??= await this.prepare(files, "blank");
    try {
      await sandbox.copyFrom(parent);
      await placeholders(sandbox.hostWorkspace, sandbox.shared);
      await carryExports(parent, sandbox);
    } catch (error) {
      this.remove(sandbox);
      throw error;
    }
    this.live.add(sandbox);
    if (!this.closed && this.options.stageNext !== false) this.stageBlank(files);
    this.options.onState?.({ id: sandbox.id, rolloutId: options.rolloutId, state: "ready" });
    return sandbox;
  }

  /**
   * Stores `sandbox`'s workspace, its /tmp and the task's writable dirs as trees of reflinked (or copied) files,
   * its shell's directory and exported variables (`LocalSandbox.saveTree`, `readExports`); restored by
   * `acquire(files, { restore })`.
   */
  async saveSnapshot(sandbox: Sandbox, store: SnapshotStore, id: string): Promise<SnapshotHandle> {
    const local = sandbox as LocalSandbox;
    const path = await store.place(id, "tree");
    const cwd = local.currentCwd;
    // the shell is idle between turns: its variables are read while the files are stored (a stop delays the answer)
    const [exports, { outside, bytes }] = await Promise.all([readExports(local), local.saveTree(path)]);
    return store.commit({
      id,
      format: "tree",
      path,
      cwd,
      outside,
      bytes,
      ...(exports !== undefined && { exports }),
    });
  }

  /** Keeps one blank sandbox of `files` staged for the next fork. */
  private stageBlank(files: TaskFiles): void {
    const list = this.blanks.get(files.key) ?? [];
    this.blanks.set(files.key, list);
    if (list.length > 0) return;
    const next = this.prepare(files, "blank");
    next.catch(() => undefined);
    list.push(next);
  }

  /** Sandboxes of the task bundle `key` staged (ready or being prepared) for the next acquires. */
  stagedCount(key: string): number {
    return this.spares.get(key)?.length ?? 0;
  }

  /** Starts preparing sandboxes of `files` until as many wait as the task has live ones (at most maxStaged). */
  private stage(files: TaskFiles): void {
    const list = this.spares.get(files.key) ?? [];
    this.spares.set(files.key, list);
    const live = [...this.live].filter((s) => s.taskKey === files.key).length;
    const want = Math.min(Math.max(1, live), this.options.maxStaged ?? 8);
    while (list.length < want) {
      const next = this.prepare(files);
      next.catch(() => undefined);
      list.push(next);
    }
  }

  /** Kills the sandbox's processes at once; its directory is removed in the background. */
  async release(sandbox: Sandbox): Promise<void> {
    const local = sandbox as LocalSandbox;
    this.live.delete(local);
    this.remove(local);
    this.options.onState?.({ id: local.id, state: "removed" });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const spare of [...this.spares.values(), ...this.blanks.values()].flat()) {
      const box = await spare.catch(() => undefined);
      if (box) this.remove(box);
    }
    this.spares.clear();
    this.blanks.clear();
    for (const box of [...this.live]) await this.release(box);
    await Promise.all([...this.removals]);
  }

  private remove(sandbox: LocalSandbox): void {
    sandbox.kill();
    const work = sandbox
      .removeFiles()
      .catch(() => undefined)
      .finally(() => {
        this.uids.free(sandbox.uid);
        this.removals.delete(work);
      });
    this.removals.add(work);
  }

  /**
   * A new sandbox with its shell started and a fresh copy of the task's workspace, or `snapshot` unpacked, or
   * (`"blank"`) an empty workspace a fork fills.
   */
  private async prepare(files: TaskFiles, from?: Prepared | "blank"): Promise<LocalSandbox> {
    const roPaths = await this.check();
    const id = `local-${++this.counter}-${randomBytes(3).toString("hex")}`;
    const uid = this.uids.take();
    const identity: BwrapSpec["identity"] = this.asRoot ? { kind: "setpriv", uid } : { kind: "userns" };
    const agentId = this.asRoot ? uid : SANDBOX_UID;
    const environment = files.environment ?? {};
    const made = await makeHostDirs(this.options.root, id, {
      uid,
      agentId,
      asRoot: this.asRoot,
      dirs: environment.dirs ?? [],
    });
    const { workspace } = made;
    const host: SandboxHost = {
      ...made,
      id,
      uid,
      identity,
      takeUid: () => this.uids.take(),
      freeUid: (id) => this.uids.free(id),
      evaluations: join(this.options.root, "evaluations"),
      python: this.options.python,
      roPaths,
      maxProcesses: this.options.maxProcesses ?? 1024,
      memoryMb: environment.memoryMb ?? this.options.memoryMb ?? 8192,
      asRoot: this.asRoot,
      agentInit: this.options.agentInit ?? "",
      workdir: environment.workdir ?? SANDBOX_WORKSPACE,
      env: environment.env ?? {},
      onState: this.options.onState,
    };
    const sandbox = new LocalSandbox(host, files);
    try {
      if (this.asRoot) await makeShareable(files, sandbox.shared);
      if (from === "blank") {
        await sandbox.startShell();
        return sandbox;
      }
      if (from && "tree" in from) await sandbox.restoreTree(from.tree, from.outside);
      else if (from) await sandbox.unpack(from.tar);
      if (from) await placeholders(workspace, sandbox.shared);
      else {
        await copyWorkspace(files, sandbox.shared, workspace);
        if (this.asRoot) await chownTree(workspace, uid);
      }
      await sandbox.startShell(from?.cwd);
    } catch (error) {
      this.remove(sandbox);
      throw error;
    }
    return sandbox;
  }
}
