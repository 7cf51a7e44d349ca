import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, cp, lstat, mkdir, mkdtemp, readdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { killGroup, removeTree, runProcess } from "./process.ts";
import { execWithTimeout, SentinelShell } from "./shell.ts";
import { readSnapshotTar, type SnapshotStore } from "./snapshot-store.ts";
import { restoreShell, saveTarSnapshot } from "./snapshot-tar.ts";
import type {
  AcquireOptions,
  EvaluationOutput,
  EvaluationRequest,
  ExecResult,
  Runtime,
  Sandbox,
  SnapshotHandle,
  TaskFiles,
} from "./types.ts";

export interface UnsandboxedRuntimeOptions {
  /** Directory holding one sub-directory per sandbox and the evaluation directories (outside every sandbox). */
  root: string;
  /** Interpreter the agent's `python`/`python3` and the evaluation run. */
  python: string;
  /** Shell text run once in every new agent shell before its first command (e.g. an env's guard functions). */
  agentInit?: string;
  onState?: (state: { id: string; rolloutId?: string; state: string; command?: string }) => void;
}

/**
 * `local.isolation = "none"`: sandboxes as plain directories on this machine with a persistent bash each
 * (for machines where bwrap cannot run). NOT a security boundary: the agent's
 * commands run as the current user and can read anything that user can. Use docker for untrusted policies.
 * @example
 * const runtime = new UnsandboxedRuntime({ root: "/tmp/air-sandboxes", python: "/usr/bin/python3" });
 * const sandbox = await runtime.acquire(files, { rolloutId: "r1" });
 * await sandbox.exec("ls", 10_000);
 */
export class UnsandboxedRuntime implements Runtime {
  readonly kind = "local" as const;
  private readonly live = new Set<PlainSandbox>();

  constructor(private readonly options: UnsandboxedRuntimeOptions) {}

  async acquire(files: TaskFiles, options: AcquireOptions): Promise<Sandbox> {
    const id = `local-${options.rolloutId.replace(/[^A-Za-z0-9_.-]/g, "_")}-${randomBytes(3).toString("hex")}`;
    const dir = join(this.options.root, id);
    const workspace = join(dir, "home", "workspace");
    const bin = join(dir, "bin");
    await mkdir(workspace, { recursive: true });
    await mkdir(bin, { recursive: true });
    for (const name of ["python", "python3"]) await symlink(this.options.python, join(bin, name));
    const tar = options.restore ? await readSnapshotTar(options.restore) : options.snapshot;
    if (tar) {
      const out = await runProcess(["tar", "-xf", "-", "-C", workspace], {
        cwd: dir,
        timeoutMs: 60_000,
        input: tar,
      });
      if (out.exitCode !== 0) throw new Error(`unpacking the snapshot failed: ${out.stderr}`);
    } else {
      await cp(join(files.dir, "workspace"), workspace, { recursive: true });
      for (const path of files.readOnly) await makeReadOnly(join(workspace, path));
    }
    const sandbox = new PlainSandbox(id, dir, workspace, bin, files, this.options);
    await sandbox.startShell(workspace);
    this.live.add(sandbox);
    if (options.restore) await restoreShell(sandbox, options.restore);
    this.options.onState?.({ id, rolloutId: options.rolloutId, state: "ready" });
    return sandbox;
  }

  async release(sandbox: Sandbox): Promise<void> {
    const local = sandbox as PlainSandbox;
    this.live.delete(local);
    await local.destroy();
    this.options.onState?.({ id: local.id, state: "removed" });
  }

  /** Stores the workspace tar and the shell's directory. */
  saveSnapshot(sandbox: Sandbox, store: SnapshotStore, id: string): Promise<SnapshotHandle> {
    const plain = sandbox as PlainSandbox;
    return saveTarSnapshot(plain, plain.currentCwd, store, id);
  }

  async close(): Promise<void> {
    await Promise.all([...this.live].map((s) => this.release(s)));
  }
}

async function makeReadOnly(path: string): Promise<void> {
  const info = await lstat(path).catch(() => undefined);
  if (!info || info.isSymbolicLink()) return;
  if (info.isDirectory()) {
    for (const entry of await readdir(path)) await makeReadOnly(join(path, entry));
    await chmod(path, 0o555);
  } else await chmod(path, 0o444);
}

class PlainSandbox implements Sandbox {
  private shell: SentinelShell | undefined;
  private child: ChildProcess | undefined;
  private cwd: string;
  private evaluations = 0;

  constructor(
    readonly id: string,
    private readonly dir: string,
    readonly workspace: string,
    private readonly bin: string,
    private readonly files: TaskFiles,
    private readonly options: UnsandboxedRuntimeOptions,
  ) {
    this.cwd = workspace;
  }

  /** The agent shell's working directory. */
  get currentCwd(): string {
    return this.cwd;
  }

  private env(): Record<string, string> {
    return {
      PATH: `${this.bin}:/usr/local/bin:/usr/bin:/bin`,
      HOME: join(this.dir, "home"),
      LANG: "C.UTF-8",
      PYTHONDONTWRITEBYTECODE: "1",
    };
  }

  async startShell(cwd: string): Promise<void> {
    const child = spawn("bash", ["--noprofile", "--norc"], {
      cwd,
      env: this.env(),
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const shell = new SentinelShell((text) => child.stdin?.write(text));
    child.stdout?.on("data", (chunk: Buffer) => shell.feed(chunk));
    child.stderr?.on("data", (chunk: Buffer) => shell.feed(chunk));
    child.stdin?.on("error", () => {});
    child.on("exit", () => shell.fail(new Error("the sandbox shell exited")));
    child.stdin?.write(`${SentinelShell.PRELUDE}${this.options.agentInit ?? ""}\n`);
    this.child = child;
    this.shell = shell;
    this.cwd = cwd;
    await shell.run("true");
  }

  async exec(command: string, timeoutMs: number): Promise<ExecResult> {
    if (!this.shell) await this.startShell(this.cwd);
    const shell = this.shell as SentinelShell;
    const result = await execWithTimeout(shell, command, timeoutMs, this.cwd, {
      restart: async () => {
        this.shell = undefined;
        const cwd = existsSync(this.cwd) ? this.cwd : this.workspace;
        await this.startShell(cwd);
        return cwd;
      },
      killAndRestart: async () => {
        if (this.child) killGroup(this.child);
        shell.fail(new Error("timed out"));
        this.shell = undefined;
        await this.startShell(this.cwd);
        return this.cwd;
      },
    });
    this.cwd = result.cwd;
    return result;
  }

  async evaluate(request: EvaluationRequest): Promise<EvaluationOutput> {
    const evalRoot = join(this.options.root, "evaluations");
    await mkdir(evalRoot, { recursive: true });
    const dir = await mkdtemp(join(evalRoot, `${this.id}-${this.evaluations++}-`));
    try {
      await cp(this.workspace, dir, {
        recursive: true,
        filter: async (src) => !(await lstat(src)).isSymbolicLink(),
      });
      await cp(join(this.files.dir, "evaluation"), dir, { recursive: true, force: true });
      const out = await runProcess(["bash", "-c", request.command], {
        cwd: dir,
        timeoutMs: request.timeoutMs,
        env: this.env(),
      });
      return { stdout: out.stdout, stderr: out.stderr, exitCode: out.exitCode, timedOut: out.timedOut };
    } finally {
      await removeTree(dir);
    }
  }

  async snapshot(): Promise<Uint8Array> {
    const out = await runProcess(["tar", "-cf", "-", "-C", this.workspace, "."], {
      cwd: this.dir,
      timeoutMs: 60_000,
    });
    if (out.exitCode !== 0) throw new Error(`snapshot failed: ${out.stderr}`);
    return out.stdoutBytes;
  }

  async alive(): Promise<boolean> {
    return this.child !== undefined && this.child.exitCode === null;
  }

  async destroy(): Promise<void> {
    if (this.child) killGroup(this.child);
    this.shell?.fail(new Error("sandbox released"));
    await removeTree(this.dir);
  }
}
