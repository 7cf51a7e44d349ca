import type { ChildProcess } from "node:child_process";
import { chown, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type BwrapSpec, bwrapInvocation, groupFor, passwdFor, SANDBOX_UID, sandboxEnv } from "./bwrap.ts";
import { copyTree, freeze, thaw } from "./fork-copy.ts";
import type { SandboxHost } from "./local-host.ts";
import { collectDir, diskUsage, evaluationBinds, layEvaluationFiles, readCollected } from "./local-run.ts";
import { outsidePairs, restoreSandboxTree, saveSandboxTree } from "./local-snapshot.ts";
import { chownTree, killGroup, removeTree, runProcess, startBwrapShell } from "./process.ts";
import { type SharedPath, sharedPaths } from "./shared.ts";
import { execWithTimeout, type SentinelShell, shellQuote } from "./shell.ts";
import type { TreeManifest } from "./snapshot-tree.ts";
import type {
  EvaluationOutput,
  EvaluationRequest,
  ExecResult,
  RunRequest,
  Sandbox,
  TaskFiles,
} from "./types.ts";

/** Where the agent's workspace is mounted (read-only) while it is copied for an evaluation or a snapshot. */
const SOURCE = "/air/source";

/** One bwrap sandbox with the agent's persistent shell; evaluations run in separate bwraps. */
export class LocalSandbox implements Sandbox {
  readonly workspace: string;
  readonly id: string;
  private shell: SentinelShell | undefined;
  private child: ChildProcess | undefined;
  private cwd: string;
  private evaluations = 0;
  /** Evaluation copies still being removed (in the background, after the result is back). */
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly host: SandboxHost,
    private readonly files: TaskFiles,
  ) {
    this.id = host.id;
    this.workspace = host.workdir;
    this.cwd = host.workdir;
  }

  get uid(): number {
    return this.host.uid;
  }

  /** Pid of the sandbox's bwrap, while it runs (every process of the sandbox descends from it). */
  get bwrapPid(): number | undefined {
    return this.child?.pid;
  }

  /** The workspace's path on the host. */
  get hostWorkspace(): string {
    return this.host.workspace;
  }

  /** Key of the task bundle this sandbox was made from. */
  get taskKey(): string {
    return this.files.key;
  }

  /** The task's read-only paths, mounted from the bundle (never copied). */
  get shared(): SharedPath[] {
    this.sharedList ??= sharedPaths(this.files);
    return this.sharedList;
  }
  private sharedList: SharedPath[] | undefined;

  /** A bwrap of this sandbox; the agent's shell and evaluations see the shared paths, copies and tars do not. */
  private spec(command: string[], extra: Partial<BwrapSpec> = {}): BwrapSpec {
    const h = this.host;
    return {
      workspace: h.workspace,
      workspacePath: this.workspace,
      shared: this.shared,
      roPaths: h.roPaths,
      passwd: h.passwd,
      group: h.group,
      python: h.python,
      identity: h.identity,
      maxProcesses: h.maxProcesses,
      memoryMb: h.memoryMb,
      command,
      ...extra,
    };
  }

  /** Runs a one-off command in its own bwrap (killed with everything it started past `timeoutMs`). */
  private sandboxed(spec: BwrapSpec, timeoutMs: number, input?: Uint8Array, env?: Record<string, string>) {
    const { argv, fd3 } = bwrapInvocation(spec);
    const all = { ...sandboxEnv(), ...this.host.env, ...env };
    return runProcess(argv, { cwd: "/", timeoutMs, env: all, fd3, input });
  }

  /**
   * Starts the agent's bash in a new bwrap, in `cwd` when the agent can still enter it (the workspace, its /tmp, a
   * writable dir, the system), else in the workspace.
   */
  async startShell(cwd = this.cwd): Promise<void> {
    const spec = this.spec(["bash", "--noprofile", "--norc"], {
      cwd: this.workspace,
      tmp: this.host.tmp,
      binds: this.dirBinds(),
    });
    const { argv, fd3 } = bwrapInvocation(spec);
    const env = { ...sandboxEnv(), ...this.host.env };
    const { child, shell } = startBwrapShell(argv, fd3, env, this.host.agentInit);
    this.child = child;
    this.shell = shell;
    this.cwd = this.workspace;
    const enter = cwd === this.workspace ? "true" : `cd -- ${shellQuote(cwd)} 2>/dev/null; true`;
    this.cwd = (await shell.run(enter)).cwd || this.workspace;
  }

  async exec(command: string, timeoutMs: number): Promise<ExecResult> {
    if (!this.shell) await this.startShell();
    this.host.onState?.({ id: this.id, state: "exec", command: command.slice(0, 200) });
    // Killing bwrap ends its PID namespace: every process the command started dies with it.
    const restart = async (): Promise<string> => {
      this.kill();
      await this.startShell();
      return this.cwd;
    };
    const result = await execWithTimeout(this.shell as SentinelShell, command, timeoutMs, this.cwd, {
      restart,
      killAndRestart: restart,
    });
    this.cwd = result.cwd;
    return result;
  }

  /**
   * Evaluates in a separate bwrap: the workspace is copied (as the agent, in a sandbox that sees only the
   * workspace and the copy) to a fresh directory, symlinks and special files are dropped, pristine copies
   * of the evaluation files are laid over it, and the evaluation runs there, mounted at
   * /home/agent/workspace, as a uid the agent is not (when air runs as root). Nothing of it is visible
   * from the agent's sandbox, before, during or after.
   */
  async evaluate(request: EvaluationRequest): Promise<EvaluationOutput> {
    const h = this.host;
    const dir = await mkdtemp(join(h.evaluations, `${this.id}-${this.evaluations++}-`));
    const copy = join(dir, "workspace");
    // As root every evaluation runs as a uid of its own: no other evaluation (or agent) shares its limits.
    const evalUid = h.asRoot ? h.takeUid() : undefined;
    try {
      await mkdir(copy, { mode: 0o700 });
      if (h.asRoot) await chown(copy, h.uid, h.uid);
      await this.sandboxed(
        this.spec(["cp", "-a", `${SOURCE}/.`, `${this.workspace}/`], {
          workspace: copy,
          shared: [],
          binds: [{ src: h.workspace, dest: SOURCE, readOnly: true }],
          cwd: "/",
        }),
        request.timeoutMs,
      );
      const id = evalUid ?? SANDBOX_UID;
      await writeFile(join(dir, "passwd"), passwdFor(id));
      await writeFile(join(dir, "group"), groupFor(id));
      const evaluation = join(this.files.dir, "evaluation");
      const mounted = await layEvaluationFiles(copy, evaluation, this.shared, evalUid);
      this.host.onState?.({ id: this.id, state: "evaluate", command: request.command.slice(0, 200) });
      const collect = await collectDir(dir, request, evalUid);
      const out = await this.sandboxed(
        this.spec(["bash", "-c", request.command], {
          workspace: copy,
          shared: mounted,
          identity: evalUid === undefined ? h.identity : { kind: "setpriv", uid: evalUid },
          passwd: join(dir, "passwd"),
          group: join(dir, "group"),
          binds: evaluationBinds(request, collect),
        }),
        request.timeoutMs,
        undefined,
        request.env,
      );
      const collected = out.timedOut ? undefined : await readCollected(request, collect);
      return {
        stdout: out.stdout,
        stderr: out.stderr,
        exitCode: out.exitCode,
        timedOut: out.timedOut,
        collected,
      };
    } finally {
      // The evaluation's bwrap has exited, and with its PID namespace every process it started.
      if (evalUid !== undefined) h.freeUid(evalUid);
      const removal = removeTree(dir).catch(() => undefined);
      this.pending.add(removal);
      void removal.finally(() => this.pending.delete(removal));
    }
  }

  /**
   * Fills this sandbox's (empty) workspace, /tmp and writable dirs with a copy of `parent`'s (a fork), without its
   * shared paths. As root: the parent's agent processes are stopped (its own uid) while this process copies the
   * trees straight into this sandbox's ownership (no spawn; reflinks where the filesystem has them, symlinks never
   * followed), then resumed. Otherwise (one uid for every sandbox): `tar` of each tree inside a bwrap as the agent
   * that sees only the parent's trees and this sandbox's.
   */
  async copyFrom(parent: LocalSandbox): Promise<void> {
    const h = this.host;
    const skip = new Set(this.shared.filter((s) => !s.path.includes("/")).map((s) => s.path));
    const pairs = outsidePairs(parent.host, h);
    if (h.asRoot) {
      await chown(h.workspace, h.uid, h.uid);
      const stopped = await freeze(parent.uid, parent.bwrapPid);
      try {
        await copyTree(parent.host.workspace, h.workspace, h.uid, skip);
        for (const p of pairs) await copyTree(p.from, p.to, h.uid, new Set());
      } finally {
        thaw(stopped);
      }
      return;
    }
    const excludes = [...skip].map((p) => `--exclude=${shellQuote(`./${p}`)}`).join(" ");
    const copies = [
      `tar -C ${SOURCE} --anchored ${excludes} -cf - . | tar -C ${this.workspace} -xf -`,
      ...pairs.map((p, i) => `tar -C ${SOURCE}-${i} -cf - . | tar -C ${shellQuote(p.dest)} -xf -`),
    ];
    const out = await this.sandboxed(
      this.spec(["sh", "-c", copies.join(" && ")], {
        shared: [],
        cwd: "/",
        identity: parent.host.identity,
        tmp: h.tmp,
        binds: [
          { src: parent.host.workspace, dest: SOURCE, readOnly: true },
          ...pairs.map((p, i) => ({ src: p.from, dest: `${SOURCE}-${i}`, readOnly: true })),
          ...this.dirBinds(),
        ],
      }),
      120_000,
    );
    if (out.exitCode !== 0) throw new Error(`copying the workspace for a fork failed: ${out.stderr}`);
  }

  /** The agent shell's working directory (as the agent sees it). */
  get currentCwd(): string {
    return this.cwd;
  }

  /**
   * Stores the workspace (without its shared paths), /tmp and the task's writable dirs into the new directory
   * `dest`, owned by air (`LocalRuntime.saveSnapshot`, `saveSandboxTree`), while the sandbox's processes are stopped,
   * in this process (reflinks where the filesystem has them, else copies; modes and times kept, symlinks never
   * followed); a file unchanged since this sandbox's last snapshot (inode, change time, size) is a hard link to it.
   * Returns the stored outside paths (`SnapshotHandle.outside`) and the stored bytes.
   */
  async saveTree(dest: string): Promise<{ outside: string[]; bytes: number }> {
    const skip = new Set(this.shared.filter((s) => !s.path.includes("/")).map((s) => s.path));
    await mkdir(dest, { mode: 0o700 });
    // without root every sandbox runs as air's uid: only the bwrap's descendants are stopped, never air itself
    const pid = this.bwrapPid;
    const stopped = this.host.asRoot || pid !== undefined ? await freeze(this.uid, pid) : [];
    try {
      return await saveSandboxTree(this.host, dest, skip, this.lastTrees);
    } finally {
      thaw(stopped);
    }
  }
  /** This sandbox's last stored trees (by where the agent sees them): unchanged files of the next are hard links. */
  private readonly lastTrees = new Map<string, TreeManifest>();

  /** Fills this sandbox's (empty) workspace, /tmp and writable dirs from a stored tree (`saveTree`), as its agent's. */
  async restoreTree(tree: string, outside?: string[]): Promise<void> {
    if (this.host.asRoot) await chown(this.host.workspace, this.host.uid, this.host.uid);
    await restoreSandboxTree(this.host, tree, outside);
  }

  /** Tar of the workspace, made inside a sandbox as the agent (symlinks stay links, never followed). */
  async snapshot(): Promise<Uint8Array> {
    const out = await this.sandboxed(
      this.spec(["tar", "-cf", "-", "-C", this.workspace, "."], { shared: [], cwd: "/" }),
      120_000,
    );
    if (out.exitCode !== 0) throw new Error(`snapshot failed: ${out.stderr}`);
    return out.stdoutBytes;
  }

  /** Unpacks a workspace tar into the (empty) workspace, inside a sandbox as the agent. */
  async unpack(tar: Uint8Array): Promise<void> {
    if (this.host.asRoot) await chownTree(this.host.workspace, this.host.uid);
    const out = await this.sandboxed(
      this.spec(["tar", "-xf", "-", "-C", this.workspace], { shared: [], cwd: "/" }),
      120_000,
      tar,
    );
    if (out.exitCode !== 0) throw new Error(`unpacking the snapshot failed: ${out.stderr}`);
  }

  /** Runs one command as the agent in its own bwrap over this workspace, with `folders` mounted read-only. */
  async run(request: RunRequest): Promise<ExecResult> {
    const binds = [...this.dirBinds(), ...request.folders.map((f) => ({ ...f, readOnly: true }))];
    const spec = this.spec(["bash", "-c", request.command], {
      binds,
      tmp: this.host.tmp,
      cwd: this.workspace,
    });
    const out = await this.sandboxed(spec, request.timeoutMs, undefined, request.env);
    return { output: out.stdout + out.stderr, exitCode: out.exitCode, timedOut: out.timedOut, cwd: this.cwd };
  }

  /** Bytes in the workspace (`du`). */
  async writtenBytes(): Promise<number | undefined> {
    return diskUsage(this.host.workspace);
  }

  private dirBinds(): { src: string; dest: string; readOnly: boolean }[] {
    return this.host.dirs.map((d) => ({ ...d, readOnly: false }));
  }

  async alive(): Promise<boolean> {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Kills the sandbox (bwrap and, with its PID namespace, every process in it). */
  kill(): void {
    if (this.child) killGroup(this.child);
    this.shell?.fail(new Error("sandbox killed"));
    this.shell = undefined;
    this.child = undefined;
  }

  async removeFiles(): Promise<void> {
    await Promise.all([...this.pending]);
    await removeTree(this.host.dir);
  }
}
