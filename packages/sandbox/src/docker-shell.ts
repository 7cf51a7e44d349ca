import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import { SentinelShell } from "./shell.ts";

/** A persistent bash inside a container, over one hijacked `docker exec`. */
export interface ContainerShell {
  shell: SentinelShell;
  stream: Duplex;
  /** Resolves when the exec's stream ends (the shell exited or the container died). */
  ended: Promise<void>;
  close(): void;
}

/** Splits docker's multiplexed exec stream (8-byte frame headers) and hands every payload to `onData`. */
export function demultiplexer(onData: (payload: Uint8Array) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      onData(pending.subarray(8, 8 + size));
      pending = pending.subarray(8 + size);
    }
  };
}

/**
 * Starts `bash --noprofile --norc` in `container` as `user` in `cwd` and wraps it in a {@link SentinelShell}.
 * @example const { shell } = await openContainerShell(container, { user: "agent", cwd: "/home/agent/workspace" });
 */
export async function openContainerShell(
  container: Docker.Container,
  options: { user: string; cwd: string; env?: string[]; init?: string; timeoutMs?: number },
): Promise<ContainerShell> {
  const exec = await container.exec({
    Cmd: ["bash", "--noprofile", "--norc"],
    User: options.user,
    WorkingDir: options.cwd,
    Env: options.env,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: true })) as unknown as Duplex;
  const shell = new SentinelShell((text) => stream.write(text));
  const feed = demultiplexer((payload) => shell.feed(payload));
  stream.on("data", (chunk: Buffer) => feed(chunk));
  const ended = new Promise<void>((resolve) => {
    const done = () => {
      shell.fail(new Error("the container shell ended (container stopped or shell killed)"));
      resolve();
    };
    stream.on("end", done);
    stream.on("close", done);
    stream.on("error", done);
  });
  stream.write(SentinelShell.PRELUDE + (options.init ? `${options.init}\n` : ""));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("container shell did not start")), options.timeoutMs ?? 30_000);
  });
  try {
    await Promise.race([shell.run("true"), timeout]);
  } finally {
    clearTimeout(timer);
  }
  return { shell, stream, ended, close: () => stream.destroy() };
}
