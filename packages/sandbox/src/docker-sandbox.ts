import type Docker from "dockerode";
import { withTimeout } from "./docker-client.ts";
import {
  AIR_DIR,
  cleanupCommands,
  EVAL_ERR,
  EVAL_OUT,
  evaluationScript,
  layoutCommands,
  tarWithoutReadOnly,
  taskDir,
} from "./docker-layout.ts";
import type { DockerRuntimeOptions } from "./docker-options.ts";
import { type ContainerShell, openContainerShell } from "./docker-shell.ts";
import {
  DeltaSnapshots,
  OUTSIDE_STAGE,
  outsideRestore,
  SNAPSHOT_DIR,
  STAGE_OUTSIDE,
} from "./docker-snapshot.ts";
import { onlyFileOfTar } from "./docker-tar.ts";
import { execWithTimeout, shellQuote } from "./shell.ts";
import { readExports } from "./shell-exports.ts";
import type { SnapshotHandle } from "./snapshot-handle.ts";
import type { SnapshotStore } from "./snapshot-store.ts";
import type {
  AcquireOptions,
  EvaluationOutput,
  EvaluationRequest,
  ExecResult,
  Sandbox,
  TaskFiles,
} from "./types.ts";

/**
 * A container with two persistent shells: `root` (reset, evaluation; never reachable by the agent) and `agent`
 * (the agent's commands, as the image's unprivileged user). Task bundles live in /var/lib/air (root, 0700).
 */
export class DockerSandbox implements Sandbox {
  readonly id: string;
  readonly workspace: string;
  private root: ContainerShell | undefined;
  private agent: ContainerShell | undefined;
  private cwd: string;
  private files: TaskFiles | undefined;
  private readonly bundles = new Set<string>();
  /** Stored snapshots: only what changed since the last one leaves the container. */
  private readonly stored = new DeltaSnapshots({
    rootRun: (script) => this.rootRun(script, this.options.timeoutMs * 5),
    archive: (path) => this.archive(path),
  });

  constructor(
    readonly container: Docker.Container,
    private readonly options: DockerRuntimeOptions,
  ) {
    this.id = container.id.slice(0, 12);
    this.workspace = options.workspace;
    this.cwd = options.workspace;
  }

  /** The agent shell's working directory. */
  get currentCwd(): string {
    return this.cwd;
  }

  /** Opens the root shell and the root-only directory. */
  async init(): Promise<void> {
    this.root = await openContainerShell(this.container, {
      user: "root",
      cwd: "/",
      timeoutMs: this.options.timeoutMs,
    });
    const locks = (this.options.lockPaths ?? []).map(shellQuote).join(" ");
    await this.rootRun(
      [
        `mkdir -p ${AIR_DIR}/tasks && chmod 700 ${AIR_DIR}`,
        locks
          ? `for p in ${locks}; do [ -e "$p" ] && chown -R root:root "$p" && chmod -R go-w "$p"; done; true`
          : "",
      ].join("\n"),
      this.options.timeoutMs * 5,
    );
  }

  hasBundle(key: string): boolean {
    return this.bundles.has(key);
  }

  /** Where the next workspace is prepared while the container waits in the pool. */
  private get stagedPath(): string {
    return `${this.workspace}.air-staged`;
  }

  /** Key of the task whose fresh workspace (and agent shell) waits at {@link stagedPath}, if any. */
  private staged: string | undefined;

  /** The task key this pooled sandbox has a staged workspace for (its reset for that task is near-free). */
  get stagedFor(): string | undefined {
    return this.staged;
  }

  /**
   * Kills every agent process and gives the sandbox a fresh workspace of `files`, then an agent shell in it.
   * When the pool staged this task's workspace at park time, this is two renames and a `cd` (near-free);
   * otherwise the workspace is rebuilt here.
   */
  async reset(files: TaskFiles, options: AcquireOptions, bundle: Uint8Array | undefined): Promise<void> {
    // a restore that carries /tmp and /var/tmp lays them before the agent's shell starts: never the staged shell
    const outside = options.restore && (await outsideRestore(options.restore, this.options.user));
    if (this.staged === files.key && !bundle && this.agent && !outside) {
      // The staged workspace takes the workspace's place; the agent shell already started in it is kept (no new
      // exec). A fork into a parked container first replaces the staged contents by the snapshot.
      this.staged = undefined;
      this.stored.forget();
      const staged = shellQuote(this.stagedPath);
      const ws = shellQuote(this.workspace);
      if (options.snapshot) {
        await this.rootRun(`find ${staged} -mindepth 1 -delete`);
        await withTimeout(
          this.container.putArchive(Buffer.from(options.snapshot), { path: this.stagedPath }),
          this.options.timeoutMs,
          "putArchive snapshot",
        );
      }
      const layout = options.snapshot
        ? layoutCommands(files, this.stagedPath, false, this.options.user).slice(2)
        : [];
      await this.rootRun([...layout, `rm -rf ${ws} ${SNAPSHOT_DIR} && mv ${staged} ${ws}`].join("\n"));
      const cd = await this.agent.shell.run(`cd ${ws}`);
      if (cd.exitCode !== 0) throw new Error(`the staged agent shell cannot enter ${this.workspace}`);
      this.cwd = this.workspace;
      this.files = files;
      return;
    }
    this.staged = undefined;
    this.stored.forget();
    const dir = taskDir(files);
    if (bundle) {
      await this.rootRun(`rm -rf ${shellQuote(dir)} && mkdir -p ${shellQuote(dir)}`);
      await withTimeout(
        this.container.putArchive(Buffer.from(bundle), { path: dir }),
        this.options.timeoutMs,
        "putArchive",
      );
      await this.rootRun(`chown -R root:root ${shellQuote(dir)}`);
      this.bundles.add(files.key);
    }
    this.agent?.close();
    this.agent = undefined;
    const ws = shellQuote(this.workspace);
    const u = shellQuote(this.options.user);
    await this.rootRun(
      [
        `pkill -KILL -u ${u} || true`,
        `rm -rf ${shellQuote(this.stagedPath)} ${SNAPSHOT_DIR}`,
        ...(options.snapshot
          ? [`rm -rf ${ws} && mkdir -p ${ws}`]
          : layoutCommands(files, this.workspace, true, this.options.user)),
        ...cleanupCommands(this.options.user),
      ].join("\n"),
    );
    if (options.snapshot) {
      await withTimeout(
        this.container.putArchive(Buffer.from(options.snapshot), { path: this.workspace }),
        this.options.timeoutMs,
        "putArchive snapshot",
      );
      await this.rootRun(layoutCommands(files, this.workspace, false, this.options.user).slice(2).join("\n"));
    }
    if (outside) {
      await this.rootRun(STAGE_OUTSIDE);
      await withTimeout(
        this.container.putArchive(Buffer.from(outside.tar), { path: OUTSIDE_STAGE }),
        this.options.timeoutMs,
        "putArchive outside dirs",
      );
      await this.rootRun(outside.script);
    }
    this.files = files;
    await this.startAgentShell(this.workspace);
  }

  private async startAgentShell(cwd: string): Promise<void> {
    this.agent = await openContainerShell(this.container, {
      user: this.options.user,
      cwd,
      env: [`HOME=/home/${this.options.user}`, "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"],
      init: [this.options.agentInit, this.options.shellInit].filter(Boolean).join("\n"),
      timeoutMs: this.options.timeoutMs,
    });
    this.cwd = cwd;
  }

  private async rootRun(command: string, timeoutMs = this.options.timeoutMs): Promise<string> {
    if (!this.root) throw new Error("sandbox not initialised");
    const result = await withTimeout(this.root.shell.run(command), timeoutMs, `root command in ${this.id}`);
    if (result.exitCode !== 0)
      throw new Error(`root command failed (${result.exitCode}): ${result.output.slice(-500)}`);
    return result.output;
  }

  async exec(command: string, timeoutMs: number): Promise<ExecResult> {
    if (!this.agent) await this.startAgentShell(this.cwd);
    const agent = this.agent as ContainerShell;
    this.options.onState?.({ id: this.id, state: "exec", command: command.slice(0, 200) });
    // A new agent shell in the last directory when it still exists (else the workspace).
    const reopen = async (): Promise<string> => {
      agent.close();
      this.agent = undefined;
      const cwd = await this.rootRun(
        `[ -d ${shellQuote(this.cwd)} ] && echo -n ${shellQuote(this.cwd)} || echo -n ${shellQuote(this.workspace)}`,
      );
      await this.startAgentShell(cwd);
      return cwd;
    };
    const result = await execWithTimeout(agent.shell, command, timeoutMs, this.cwd, {
      restart: reopen,
      killAndRestart: async () => {
        await this.rootRun(`pkill -KILL -u ${shellQuote(this.options.user)} || true`);
        return reopen();
      },
    });
    this.cwd = result.cwd;
    return result;
  }

  /**
   * Evaluates at the workspace's own path (MLGym's evaluators hard-code /home/agent/workspace/...): agent
   * processes are frozen, the workspace is moved aside, a root-only (0700) copy without symlinks and with
   * the pristine evaluation files takes its place, the evaluation runs as root, then everything is put back.
   */
  async evaluate(request: EvaluationRequest): Promise<EvaluationOutput> {
    if (!this.files) throw new Error("sandbox has no task");
    const seconds = Math.max(1, Math.ceil(request.timeoutMs / 1000));
    const init = this.options.shellInit;
    const command = init ? `{ ${init}; } >/dev/null 2>&1\n${request.command}` : request.command;
    const status = await this.rootRun(
      evaluationScript(this.files, this.workspace, this.options.user, command, seconds),
      request.timeoutMs + this.options.timeoutMs,
    );
    const exitCode = Number(status.trim().split("\n").at(-1));
    // the last 100 kB of each, far below the root shell's cap (a failure's head is what the agent reads first)
    const stdout = await this.rootRun(`tail -c 100000 ${EVAL_OUT} 2>/dev/null; true`);
    const stderr = await this.rootRun(
      `tail -c 100000 ${EVAL_ERR} 2>/dev/null; rm -f ${EVAL_OUT} ${EVAL_ERR}`,
    );
    return { stdout, stderr, exitCode, timedOut: exitCode === 137 };
  }

  /**
   * Tar of the workspace without the read-only paths (a reset lays the pristine ones again): made by the root
   * shell into a root-only file (the workspace checked to be a real directory first), fetched with the engine's
   * archive API (not through the shell, whose output is capped), then removed.
   */
  async snapshot(): Promise<Uint8Array> {
    if (!this.files) throw new Error("sandbox has no task");
    const ws = shellQuote(this.workspace);
    const file = `${AIR_DIR}/snapshot.tar`;
    await this.rootRun(
      `rm -f ${file}; [ -d ${ws} ] && [ ! -L ${ws} ] && ${tarWithoutReadOnly(this.files, ws)} > ${file}`,
    );
    try {
      return onlyFileOfTar(await this.archive(file));
    } finally {
      await this.rootRun(`rm -f ${file}`).catch(() => undefined);
    }
  }

  /**
   * Stores the workspace as a complete tree in `store` (`DeltaSnapshots`): the container sends what changed since
   * this sandbox's last stored snapshot, the rest is hard-linked from it on this machine; the agent's /tmp and
   * /var/tmp are stored beside it (`outside/<i>`), whole; the shell's directory and exported variables in the handle.
   */
  async saveTree(store: SnapshotStore, id: string): Promise<SnapshotHandle> {
    const files = this.files;
    if (!files) throw new Error("sandbox has no task");
    const exports = readExports(this);
    const { workspace, cwd } = this;
    return this.stored.save(store, id, { files, workspace, user: this.options.user, cwd, exports });
  }

  /** The engine's tar of `path` in the container (`getArchive`: not through a shell, whose output is capped). */
  private async archive(path: string): Promise<Buffer> {
    const stream = await withTimeout(
      this.container.getArchive({ path }),
      this.options.timeoutMs,
      "getArchive",
    );
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    return Buffer.concat(chunks);
  }

  async alive(): Promise<boolean> {
    try {
      const info = await withTimeout(this.container.inspect(), 10_000, "inspect");
      return info.State.Running === true && this.root !== undefined;
    } catch {
      return false;
    }
  }

  /**
   * Parks a released container: agent processes killed, the used workspace and the agent's leftovers
   * removed, and the next workspace of the same task staged (a fresh copy beside the workspace path, with an
   * agent shell already started in it), so that the next {@link reset} of this task only renames it.
   */
  async park(): Promise<void> {
    this.agent?.close();
    this.agent = undefined;
    this.staged = undefined;
    this.stored.forget();
    const files = this.files;
    const u = shellQuote(this.options.user);
    if (!files || !this.bundles.has(files.key)) {
      await this.rootRun(`pkill -KILL -u ${u} || true`);
      return;
    }
    await this.rootRun(
      [
        `pkill -KILL -u ${u} || true`,
        `rm -rf ${shellQuote(this.workspace)} ${SNAPSHOT_DIR}`,
        ...layoutCommands(files, this.stagedPath, true, this.options.user),
        ...cleanupCommands(this.options.user),
      ].join("\n"),
    );
    await this.startAgentShell(this.stagedPath);
    this.staged = files.key;
  }

  async destroy(): Promise<void> {
    this.agent?.close();
    this.root?.close();
    this.root = undefined;
    await withTimeout(this.container.remove({ force: true, v: true }), 30_000, "remove").catch(
      () => undefined,
    );
  }
}
