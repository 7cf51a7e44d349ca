import { PassThrough } from "node:stream";
import type Docker from "dockerode";
import { withTimeout } from "./docker-client.ts";

/** What a one-off command in a container printed and returned. */
export interface OneOffResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  timedOut: boolean;
}

/**
 * Runs `cmd` once in `container` (a `docker exec`, not a shell), as `user` in `cwd` with `env`, and waits at
 * most `timeoutMs` for it to end; past that it resolves with `timedOut` (the caller removes the container, which
 * is the only sure way to stop every process the command started).
 * @example await execOnce(container, ["cat", "/etc/os-release"], { user: "root", timeoutMs: 10_000 })
 */
export async function execOnce(
  container: Docker.Container,
  cmd: string[],
  options: { user: string; cwd?: string; env?: string[]; timeoutMs: number; maxChars?: number },
): Promise<OneOffResult> {
  const max = options.maxChars ?? 200_000;
  const exec = await withTimeout(
    container.exec({
      Cmd: cmd,
      User: options.user,
      WorkingDir: options.cwd,
      Env: options.env,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    }),
    30_000,
    "docker exec create",
  );
  const stream = await withTimeout(exec.start({ hijack: true, stdin: false }), 30_000, "docker exec start");
  let stdout = "";
  let stderr = "";
  const out = new PassThrough();
  const err = new PassThrough();
  out.on("data", (c: Buffer) => {
    stdout = (stdout + c.toString("utf8")).slice(-max);
  });
  err.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString("utf8")).slice(-max);
  });
  container.modem.demuxStream(stream, out, err);
  const ended = new Promise<void>((resolve) => {
    stream.on("end", resolve);
    stream.on("close", resolve);
    stream.on("error", () => resolve());
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), options.timeoutMs);
  });
  const outcome = await Promise.race([ended, timeout]).finally(() => clearTimeout(timer));
  if (outcome === "timeout") {
    if ("destroy" in stream && typeof stream.destroy === "function") stream.destroy();
    return { stdout, stderr, exitCode: 137, timedOut: true };
  }
  const info = await withTimeout(exec.inspect(), 30_000, "docker exec inspect");
  return { stdout, stderr, exitCode: info.ExitCode ?? -1, timedOut: false };
}

/**
 * Runs a root shell script once and returns its stdout; a non-zero exit is an error with the script's output.
 * @example await rootScript(container, "mkdir -p /logs/verifier", 30_000)
 */
export async function rootScript(
  container: Docker.Container,
  script: string,
  timeoutMs: number,
): Promise<string> {
  const r = await execOnce(container, ["sh", "-c", script], { user: "root", cwd: "/", timeoutMs });
  if (r.timedOut) throw new Error(`root command ran past ${timeoutMs} ms: ${script.slice(0, 120)}`);
  if (r.exitCode !== 0)
    throw new Error(
      `root command failed (${r.exitCode}): ${script.slice(0, 120)}: ${(r.stderr || r.stdout).slice(-500)}`,
    );
  return r.stdout;
}

/** A tar of a host directory's contents, or of `names` in it (for `putArchive`). */
export async function tarOf(dir: string, names: string[] = ["."]): Promise<Buffer> {
  const proc = Bun.spawn(["tar", "-cf", "-", "-C", dir, "--", ...names], { stdout: "pipe", stderr: "pipe" });
  const [bytes, code] = await Promise.all([new Response(proc.stdout).arrayBuffer(), proc.exited]);
  if (code !== 0) throw new Error(`tar of ${dir} failed: ${await new Response(proc.stderr).text()}`);
  return Buffer.from(bytes);
}
