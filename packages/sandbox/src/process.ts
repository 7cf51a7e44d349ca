import { type ChildProcess, spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import type { Writable } from "node:stream";
import { SentinelShell } from "./shell.ts";

/** Output of a finished child process. */
export interface ProcessOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
  timedOut: boolean;
}

/**
 * Runs `argv` in its own process group; past `timeoutMs` the whole group gets SIGKILL.
 * @example const out = await runProcess(["bash", "-c", "echo hi"], { cwd: "/tmp", timeoutMs: 5000 });
 */
export function runProcess(
  argv: string[],
  options: {
    cwd: string;
    timeoutMs: number;
    env?: Record<string, string>;
    input?: Uint8Array;
    /** Written to a fourth pipe (fd 3 of the child), e.g. bwrap's `--args 3`. */
    fd3?: Uint8Array;
  },
): Promise<ProcessOutput & { stdoutBytes: Uint8Array }> {
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = argv;
    if (!cmd) return reject(new Error("empty command"));
    const child = spawn(cmd, args, {
      cwd: options.cwd,
      env: options.env ?? (process.env as Record<string, string>),
      detached: true,
      stdio: options.fd3 ? ["pipe", "pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe"],
    });
    if (options.fd3) writeFd3(child, options.fd3);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, options.timeoutMs);
    child.stdout?.on("data", (c: Buffer) => out.push(c));
    child.stderr?.on("data", (c: Buffer) => err.push(c));
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const stdoutBytes = new Uint8Array(Buffer.concat(out));
      resolve({
        stdout: Buffer.from(stdoutBytes).toString("utf8"),
        stdoutBytes,
        stderr: Buffer.concat(err).toString("utf8"),
        exitCode: code ?? (signal ? 128 + 9 : 1),
        timedOut,
      });
    });
    child.stdin?.end(options.input ? Buffer.from(options.input) : undefined);
  });
}

/** SIGKILLs the process group of `child` (it must have been spawned detached). */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

/**
 * `chown -R uid:uid path` (never follows symlinks).
 * @example await chownTree("/srv/ws", 200001);
 */
export async function chownTree(path: string, uid: number): Promise<void> {
  const out = await runProcess(["chown", "-R", "-P", `${uid}:${uid}`, path], {
    cwd: "/",
    timeoutMs: 120_000,
  });
  if (out.exitCode !== 0) throw new Error(`chown ${path} failed: ${out.stderr}`);
}

/**
 * Removes a directory tree even where files were made read-only.
 * @example await removeTree("/tmp/air-sandboxes/local-1-abc");
 */
export async function removeTree(dir: string): Promise<void> {
  await runProcess(["chmod", "-R", "u+w", dir], { cwd: "/", timeoutMs: 60_000 }).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
}

/**
 * Writes `data` to the child's fd 3 (spawned with a fourth "pipe") and closes it.
 * @example writeFd3(child, new TextEncoder().encode("--unshare-pid\0"));
 */
export function writeFd3(child: ChildProcess, data: Uint8Array): void {
  const pipe = child.stdio[3] as Writable | null | undefined;
  pipe?.on("error", () => {});
  pipe?.end(Buffer.from(data));
}

/**
 * Starts a persistent bash under bwrap (`argv` from `bwrapInvocation`, its setup on fd 3) in its own process group,
 * wired to a SentinelShell: stdout and stderr feed it, a spawn error or exit fails it, and `init` (after the
 * shell's prelude) runs first. The caller keeps `child` to kill its group.
 * @example const { child, shell } = startBwrapShell(argv, fd3, sandboxEnv()); await shell.run("ls", 5000);
 */
export function startBwrapShell(
  argv: string[],
  fd3: Uint8Array,
  env: Record<string, string>,
  init = "",
): { child: ChildProcess; shell: SentinelShell } {
  const [bwrap, ...args] = argv;
  const child = spawn(bwrap as string, args, {
    cwd: "/",
    env,
    detached: true,
    stdio: ["pipe", "pipe", "pipe", "pipe"],
  });
  writeFd3(child, fd3);
  const shell = new SentinelShell((text) => child.stdin?.write(text));
  child.stdout?.on("data", (chunk: Buffer) => shell.feed(chunk));
  child.stderr?.on("data", (chunk: Buffer) => shell.feed(chunk));
  child.stdin?.on("error", () => {});
  child.on("error", (error) => shell.fail(error));
  child.on("exit", () => shell.fail(new Error("the sandbox shell exited")));
  child.stdin?.write(init ? `${SentinelShell.PRELUDE}${init}\n` : SentinelShell.PRELUDE);
  return { child, shell };
}
