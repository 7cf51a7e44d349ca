import { readFileSync } from "node:fs";
import Docker from "dockerode";

/** Where a Docker Engine API answers: `unix://<socket>`, `tcp://<host>:<port>` (with TLS files) or `ssh://[user@]host[:port]`. */
export interface DockerEndpoint {
  url: string;
  /** Client certificate, key and CA (PEM file paths) for `tcp://` with TLS, as `docker --tlsverify` takes them. */
  tls?: { ca: string; cert: string; key: string };
}

/** A docker client from DOCKER_HOST or the default socket. */
export function dockerClient(): Docker {
  return new Docker();
}

/**
 * A dockerode client for an endpoint: `unix://` → the socket, `tcp://` → HTTP, or HTTPS with client
 * certificate when `tls` is given, `ssh://` → docker-modem's ssh transport (the SSH agent at `SSH_AUTH_SOCK`).
 * The one factory of Docker clients: runtimes, the launcher's sweep and reaper, `rl clean` and the bench use it.
 * @example dockerClientFor({ url: "tcp://127.0.0.1:2376", tls: { ca: "ca.pem", cert: "cert.pem", key: "key.pem" } })
 */
export function dockerClientFor(endpoint: DockerEndpoint): Docker {
  const url = new URL(endpoint.url);
  if (url.protocol === "unix:") return new Docker({ socketPath: url.pathname });
  if (url.protocol === "tcp:") {
    const port = url.port || (endpoint.tls ? "2376" : "2375");
    if (!endpoint.tls) return new Docker({ host: url.hostname, port, protocol: "http" });
    const { ca, cert, key } = endpoint.tls;
    return new Docker({
      host: url.hostname,
      port,
      protocol: "https",
      ca: readFileSync(ca),
      cert: readFileSync(cert),
      key: readFileSync(key),
    });
  }
  if (url.protocol === "ssh:") {
    return new Docker({
      protocol: "ssh",
      host: url.hostname,
      port: url.port || "22",
      username: url.username || undefined,
      sshOptions: { agent: process.env.SSH_AUTH_SOCK },
    });
  }
  throw new Error(`docker host ${endpoint.url}: expected unix://, tcp:// or ssh://`);
}

/**
 * `work`, or a rejection naming `what` when it has not settled after `ms`.
 * @example await withTimeout(docker.ping(), 3000, "docker ping");
 */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer after ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Resolves when `docker` answers a ping within `timeoutMs`, else rejects. */
export async function pingDocker(docker: Docker, timeoutMs: number): Promise<void> {
  await withTimeout(docker.ping(), timeoutMs, "docker ping");
}

/** Resolves true when the docker engine answers a ping within `timeoutMs`. */
export async function dockerReachable(docker = dockerClient(), timeoutMs = 3000): Promise<boolean> {
  try {
    await pingDocker(docker, timeoutMs);
    return true;
  } catch {
    return false;
  }
}
