import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@air/core/testing";
import type { Subprocess } from "bun";
import Docker from "dockerode";

/** A second Docker daemon on this machine, for tests of several Docker hosts. */
export interface SecondDockerd {
  /** `tcp://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Client TLS files (PEM) made for this daemon. */
  tls: { ca: string; cert: string; key: string };
  docker: Docker;
  /** Its working directory (data root, exec root, certificates, log). */
  dir: string;
  /** The `docker` CLI arguments that reach it (`-H … --tlsverify …`). */
  cliArgs: string[];
  /** Stops the daemon (SIGTERM, then SIGKILL after `graceMs`); the data root stays, `start()` starts it again. */
  stop(graceMs?: number): Promise<void>;
  /** Starts it again on the same port with the same data root. */
  start(): Promise<void>;
  /** Stops it and removes everything it made (data root, certificates). */
  remove(): Promise<void>;
}

function run(argv: string[], cwd: string): void {
  const out = Bun.spawnSync(argv, { cwd, stdout: "pipe", stderr: "pipe" });
  if (out.exitCode !== 0) throw new Error(`${argv.join(" ")}: ${out.stderr.toString()}`);
}

/** Why a second dockerd cannot start here, or undefined when it can be tried (root, dockerd and openssl found). */
export function secondDockerdProblem(): string | undefined {
  if (process.getuid?.() !== 0) return "a second dockerd needs root";
  for (const program of ["dockerd", "openssl", "docker", "ip"]) {
    if (Bun.which(program) === null) return `${program} not found`;
  }
  return undefined;
}

/**
 * Makes a CA, a server certificate for 127.0.0.1 and a client certificate with openssl (in a fresh temporary
 * directory), and starts `dockerd` with its own data root, exec root and pid file, listening only on
 * `tcp://127.0.0.1:<free port>` with `--tlsverify`, on a bridge of its own (`airbr<port>`, made here and removed
 * by `remove()`; never `--bridge=none`, with which dockerd deletes the main engine's docker0) and without
 * iptables changes, so the main daemon on /var/run/docker.sock is untouched. Resolves when it answers a ping.
 * @example const d2 = await startSecondDockerd(); try { await d2.docker.ping(); } finally { await d2.remove(); }
 */
export async function startSecondDockerd(timeoutMs = 60_000): Promise<SecondDockerd> {
  const dir = mkdtempSync(join(tmpdir(), "air-dockerd2-"));
  const pem = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => run(["openssl", ...args], dir);
  ssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca-key.pem",
    "-out",
    "ca.pem",
    "-days",
    "1",
    "-subj",
    "/CN=air-test-ca",
  );
  ssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "server-key.pem",
    "-out",
    "server.csr",
    "-subj",
    "/CN=127.0.0.1",
  );
  writeFileSync(pem("server.ext"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  ssl(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca-key.pem",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "1",
    "-extfile",
    "server.ext",
  );
  ssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "key.pem",
    "-out",
    "client.csr",
    "-subj",
    "/CN=air-test-client",
  );
  writeFileSync(pem("client.ext"), "extendedKeyUsage=clientAuth\n");
  ssl(
    "x509",
    "-req",
    "-in",
    "client.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca-key.pem",
    "-CAcreateserial",
    "-out",
    "cert.pem",
    "-days",
    "1",
    "-extfile",
    "client.ext",
  );
  const port = await freePort();
  const url = `tcp://127.0.0.1:${port}`;
  const bridge = `airbr${port}`;
  for (const argv of [
    ["ip", "link", "add", "name", bridge, "type", "bridge"],
    ["ip", "addr", "add", `10.213.${port % 250}.1/24`, "dev", bridge],
    ["ip", "link", "set", bridge, "up"],
  ]) {
    const out = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
    if (out.exitCode !== 0) {
      Bun.spawnSync(["ip", "link", "del", bridge]);
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`${argv.join(" ")}: ${out.stderr.toString()}`);
    }
  }
  const tls = { ca: pem("ca.pem"), cert: pem("cert.pem"), key: pem("key.pem") };
  const docker = new Docker({
    host: "127.0.0.1",
    port,
    protocol: "https",
    ca: readFileSync(tls.ca),
    cert: readFileSync(tls.cert),
    key: readFileSync(tls.key),
  });
  const argv = [
    "dockerd",
    "--data-root",
    pem("data"),
    "--exec-root",
    pem("exec"),
    "--pidfile",
    pem("dockerd.pid"),
    "-H",
    url,
    "--tlsverify",
    "--tlscacert",
    tls.ca,
    "--tlscert",
    pem("server.pem"),
    "--tlskey",
    pem("server-key.pem"),
    // its own bridge: with `--bridge=none` dockerd deletes docker0, which the main engine uses
    // (moby's configureNetworking calls removeDefaultBridgeInterface when the bridge is disabled)
    "--bridge",
    bridge,
    "--iptables=false",
    "--ip6tables=false",
    "--ip-masq=false",
    "--shutdown-timeout",
    "2",
  ];
  let proc: Subprocess | undefined;
  const start = async () => {
    const log = Bun.file(pem("dockerd.log"));
    proc = Bun.spawn(argv, {
      stdin: "ignore",
      stdout: log,
      stderr: log,
      env: { ...process.env, DOCKER_HOST: "" },
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await docker.ping();
        return;
      } catch {
        if (proc.exitCode !== null || Date.now() > deadline) {
          const tail = existsSync(pem("dockerd.log"))
            ? readFileSync(pem("dockerd.log"), "utf8").slice(-1500)
            : "";
          await stop(2000);
          throw new Error(`second dockerd did not start (exit ${proc.exitCode}):\n${tail}`);
        }
        await Bun.sleep(200);
      }
    }
  };
  const stop = async (graceMs = 15_000) => {
    const p = proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    p.kill("SIGTERM");
    const done = await Promise.race([p.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
    if (!done) {
      p.kill("SIGKILL");
      await p.exited;
    }
  };
  const remove = async () => {
    await stop();
    // anything the daemon left mounted under its directories
    const mounts = readFileSync("/proc/self/mounts", "utf8")
      .split("\n")
      .map((l) => l.split(" ")[1] ?? "")
      .filter((m) => m.startsWith(dir))
      .sort((a, b) => b.length - a.length);
    for (const m of mounts) Bun.spawnSync(["umount", "-l", m]);
    // the bridge first: removing the data root (the copied image) can outlast a test's teardown timeout
    Bun.spawnSync(["ip", "link", "del", bridge], { stdout: "ignore", stderr: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  };
  const cliArgs = [
    "-H",
    url,
    "--tlsverify",
    "--tlscacert",
    tls.ca,
    "--tlscert",
    tls.cert,
    "--tlskey",
    tls.key,
  ];
  await start();
  return { url, port, tls, docker, dir, cliArgs, stop, start, remove };
}

/** Copies `image` from the main engine into the second daemon (`docker save | docker -H … load`, ~30 s for 1 GB). */
export function copyImage(image: string, target: SecondDockerd): void {
  const out = Bun.spawnSync(
    ["bash", "-c", `set -o pipefail; docker save "$0" | docker "$@" load -q`, image, ...target.cliArgs],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (out.exitCode !== 0) throw new Error(`copying ${image}: ${out.stderr.toString()}`);
}
