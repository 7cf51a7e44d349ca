import { createServer } from "node:net";

/** Whether `port` on 127.0.0.1 can be listened on now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer().once("error", () => done(false));
    server.listen(port, "127.0.0.1", () => server.close(() => done(true)));
  });
}

/** The port the kernel picks for a listener on 127.0.0.1 (an ephemeral one), closed again. */
function kernelPort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that nothing listens on now, and with `count` the `count − 1` ports after it free too
 * (ZMQ binds port and port + 1). Without `range` the kernel picks it; with `range` it is drawn from [lo, hi) —
 * below 32768 the policy's outgoing connections (ephemeral ports) cannot take it before a late bind. Tests only:
 * the port is free when checked, and whoever binds it next wins.
 * @example const port = await freePort(); const zmq = await freePort({ count: 2, range: [20_000, 32_000] });
 */
export async function freePort(options: { count?: number; range?: [number, number] } = {}): Promise<number> {
  const { count = 1, range } = options;
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = range
      ? range[0] + Math.floor(Math.random() * (range[1] - range[0] - count + 1))
      : await kernelPort();
    let free = true;
    for (let i = range ? 0 : 1; free && i < count; i++) free = await canListen(port + i);
    if (free) return port;
  }
  throw new Error(`no ${count} free consecutive port(s) on 127.0.0.1 after 500 tries`);
}
