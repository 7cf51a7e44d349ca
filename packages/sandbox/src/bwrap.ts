import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { AirError } from "@air/core";
import { runProcess } from "./process.ts";

/** Where the agent's workspace is mounted inside every bwrap sandbox (MLGym's layout). */
export const SANDBOX_WORKSPACE = "/home/agent/workspace";
/** The agent's home inside the sandbox (read-only; only the workspace, /tmp and /dev/shm are writable). */
export const SANDBOX_HOME = "/home/agent";
/** Directory inside the sandbox holding the `python`/`python3` links to the configured interpreter. */
export const SANDBOX_BIN = "/opt/air/bin";
/** uid the agent has inside a user-namespace sandbox (when air does not run as root). */
export const SANDBOX_UID = 1000;

/** System directories mounted read-only (symlinks such as Debian's `/bin -> usr/bin` are recreated). */
const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];

/** One bwrap invocation: who runs, what is mounted where, and the command. */
export interface BwrapSpec {
  /** Host directory mounted read-write at {@link SANDBOX_WORKSPACE} (or `workspacePath`). */
  workspace: string;
  /** Where the workspace is mounted (a task's WORKDIR); default {@link SANDBOX_WORKSPACE}. */
  workspacePath?: string;
  /**
   * Task files mounted read-only at a workspace-relative `path` from `src` (the task bundle): shared by every
   * sandbox and evaluation of the task, never copied, and nobody inside can change or replace them.
   */
  shared?: { src: string; path: string }[];
  /** Extra host paths mounted read-only at the same path (e.g. the interpreter's prefix). */
  roPaths?: string[];
  /**
   * Host directory mounted read-write as /tmp (the agent's: kept across its shells and carried by snapshots);
   * default a fresh tmpfs of this bwrap.
   */
  tmp?: string;
  /** Further host paths mounted at a chosen path (after the workspace). */
  binds?: { src: string; dest: string; readOnly: boolean }[];
  /** Host file mounted read-only as /etc/passwd (names the agent's uid `agent`). */
  passwd?: string;
  /** Host file mounted read-only as /etc/group (names the agent's gid `agent`). */
  group?: string;
  /** Interpreter linked as `python`/`python3` in {@link SANDBOX_BIN}. */
  python: string;
  /**
   * How the sandbox gets its uid. `setpriv`: air runs as root, bwrap sets up the mounts as root and the
   * command drops to `uid` (a real, unprivileged host uid); `userns`: bwrap runs unprivileged and maps the
   * caller's uid to {@link SANDBOX_UID} in a new user namespace.
   */
  identity: { kind: "setpriv"; uid: number } | { kind: "userns" };
  /** Processes the sandbox's uid may run (RLIMIT_NPROC). */
  maxProcesses: number;
  /** Data-segment limit in MiB (RLIMIT_DATA: heap and private mappings). */
  memoryMb: number;
  /** Directory the command starts in, inside the sandbox. */
  cwd?: string;
  command: string[];
}

/** Read-only mounts of the system directories as they are on this machine. */
function systemMounts(): string[] {
  const args: string[] = [];
  for (const path of SYSTEM_PATHS) {
    const info = lstatSync(path, { throwIfNoEntry: false });
    if (!info) continue;
    if (info.isSymbolicLink()) args.push("--symlink", readlinkSync(path), path);
    else args.push("--ro-bind", path, path);
  }
  return args;
}

/**
 * The argv (starting with `bwrap`) that runs `spec.command` in a fresh sandbox: the system read-only, the
 * workspace at {@link SANDBOX_WORKSPACE}, a private /tmp (a fresh tmpfs, or the sandbox's own `tmp` directory) and /dev/shm, its own PID, IPC, UTS and network
 * namespaces (no network), killed when air dies, process and memory limits.
 * @example
 * const argv = bwrapArgv({ workspace: "/srv/ws", python: "/usr/bin/python3", identity: { kind: "userns" },
 *   maxProcesses: 512, memoryMb: 8192, command: ["bash"] });
 */
export function bwrapArgv(spec: BwrapSpec): string[] {
  const { options, command } = bwrapParts(spec);
  return ["bwrap", ...options, "--", ...command];
}

/**
 * The same sandbox as {@link bwrapArgv}, with bwrap's options passed through fd 3 (`--args 3`) so that no host
 * path shows in the sandbox's /proc/1/cmdline. Spawn `argv` with `fd3` written to its fourth stdio pipe.
 * @example const { argv, fd3 } = bwrapInvocation(spec); await runProcess(argv, { cwd: "/", timeoutMs: 5000, fd3 });
 */
export function bwrapInvocation(spec: BwrapSpec): { argv: string[]; fd3: Uint8Array } {
  const { options, command } = bwrapParts(spec);
  const fd3 = new Uint8Array(Buffer.from(options.map((o) => `${o}\0`).join("")));
  return { argv: ["bwrap", "--args", "3", "--", ...command], fd3 };
}

function bwrapParts(spec: BwrapSpec): { options: string[]; command: string[] } {
  const args = [
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
    ...systemMounts(),
  ];
  if (spec.identity.kind === "userns")
    args.push("--unshare-user", "--uid", String(SANDBOX_UID), "--gid", String(SANDBOX_UID));
  for (const path of spec.roPaths ?? []) args.push("--ro-bind", path, path);
  if (spec.passwd) args.push("--ro-bind", spec.passwd, "/etc/passwd");
  if (spec.group) args.push("--ro-bind", spec.group, "/etc/group");
  args.push("--proc", "/proc", "--dev", "/dev", "--chmod", "1777", "/dev/shm");
  if (spec.tmp) args.push("--bind", spec.tmp, "/tmp");
  else args.push("--perms", "1777", "--tmpfs", "/tmp");
  args.push("--dir", "/var", "--symlink", "/tmp", "/var/tmp");
  args.push("--dir", SANDBOX_BIN, "--symlink", spec.python, `${SANDBOX_BIN}/python`);
  args.push("--symlink", spec.python, `${SANDBOX_BIN}/python3`);
  const ws = spec.workspacePath ?? SANDBOX_WORKSPACE;
  const parent = ws.slice(0, ws.lastIndexOf("/"));
  // a WORKDIR elsewhere: its parents are made readable (bwrap would make them 0700, root's)
  if (ws !== SANDBOX_WORKSPACE && parent) args.push("--dir", parent);
  args.push("--dir", SANDBOX_HOME, "--bind", spec.workspace, ws);
  for (const s of spec.shared ?? []) args.push("--ro-bind", s.src, `${ws}/${s.path}`);
  for (const b of spec.binds ?? []) {
    const parent = b.dest.slice(0, b.dest.lastIndexOf("/"));
    if (parent) args.push("--dir", parent);
    args.push(b.readOnly ? "--ro-bind" : "--bind", b.src, b.dest);
  }
  args.push("--chdir", spec.cwd ?? ws);
  const command: string[] = [];
  const limits = ["prlimit", `--nproc=${spec.maxProcesses}`, `--data=${spec.memoryMb * 1024 * 1024}`, "--"];
  if (spec.identity.kind === "setpriv") {
    const id = String(spec.identity.uid);
    command.push(...limits, "setpriv", `--reuid=${id}`, `--regid=${id}`, "--clear-groups");
    command.push("--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--");
  } else command.push(...limits);
  return { options: args, command: [...command, ...spec.command] };
}

/** Environment of every sandboxed process (nothing of air's own environment leaks in). */
export function sandboxEnv(): Record<string, string> {
  return {
    PATH: `${SANDBOX_BIN}:/usr/local/bin:/usr/bin:/bin`,
    HOME: SANDBOX_HOME,
    USER: "agent",
    LANG: "C.UTF-8",
    PYTHONDONTWRITEBYTECODE: "1",
  };
}

/**
 * The lines of an /etc/group naming gid `uid` `agent`.
 * @example groupFor(1000) // "root:x:0:\nagent:x:1000:\n..."
 */
export function groupFor(uid: number): string {
  return `root:x:0:\nagent:x:${uid}:\nnogroup:x:65534:\n`;
}

/** The lines of an /etc/passwd naming `uid` `agent` (home {@link SANDBOX_HOME}). */
export function passwdFor(uid: number): string {
  return `root:x:0:0:root:/root:/bin/bash\nagent:x:${uid}:${uid}:agent:${SANDBOX_HOME}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
}

/**
 * Host paths the interpreter needs that the system mounts do not cover (a venv or conda prefix), so they
 * can be mounted read-only at the same path. Empty for the system Python.
 * @example await interpreterPaths("/usr/bin/python3") // []
 */
export async function interpreterPaths(python: string): Promise<string[]> {
  const out = await runProcess(
    [python, "-c", "import sys; print(sys.prefix); print(sys.base_prefix); print(sys.executable)"],
    { cwd: "/", timeoutMs: 30_000 },
  );
  if (out.exitCode !== 0)
    throw new AirError("CONFIG_INVALID", `env.local.python ${python} does not run: ${out.stderr.trim()}`, {
      plugin: "mlgym",
    });
  const covered = (p: string) => SYSTEM_PATHS.some((s) => p === s || p.startsWith(`${s}/`));
  const paths = new Set<string>();
  for (const line of [...out.stdout.trim().split("\n"), python]) {
    const path = line.trim();
    if (!path.startsWith("/")) continue;
    for (const p of [path, existsSync(path) ? realpathSync(path) : path]) if (!covered(p)) paths.add(p);
  }
  // Mount whole prefixes, not single files, when a prefix is among them.
  const list = [...paths].sort();
  return list.filter((p) => !list.some((q) => q !== p && p.startsWith(`${q}/`)));
}

/** Why bwrap cannot run here, or undefined when it can. */
export async function bwrapProblem(
  identity: BwrapSpec["identity"],
  program = "bwrap",
): Promise<string | undefined> {
  const argv = bwrapArgv({
    workspace: "/tmp",
    python: "/usr/bin/python3",
    identity,
    maxProcesses: 64,
    memoryMb: 512,
    cwd: "/",
    command: ["true"],
  });
  try {
    const out = await runProcess([program, ...argv.slice(1)], {
      cwd: "/",
      timeoutMs: 20_000,
      env: sandboxEnv(),
    });
    if (out.exitCode === 0) return undefined;
    return (out.stderr.trim() || `exit code ${out.exitCode}`).slice(0, 500);
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Fails with a clear error when bwrap cannot start a sandbox here (not installed, or no user namespaces).
 * @example await assertBwrapWorks({ kind: "userns" });
 */
export async function assertBwrapWorks(identity: BwrapSpec["identity"], program = "bwrap"): Promise<void> {
  const problem = await bwrapProblem(identity, program);
  if (!problem) return;
  throw new AirError(
    "ENV_FAILED",
    `the local runtime needs bubblewrap (bwrap) to isolate the agent, and it cannot run here: ${problem}. ` +
      'Install it (Debian: apt-get install bubblewrap; user namespaces must be enabled), or set env.runtime = "docker", ' +
      'or opt out of isolation with env.local.isolation = "none" (the agent can then read and forge evaluations).',
    { plugin: "mlgym", hook: "create" },
  );
}
