import { resolve } from "node:path";
import { dockerClientFor } from "@air/sandbox";
import type { HarborConfig } from "./config.ts";
import { type DockerHarborOptions, DockerHarborRuntime } from "./docker-runtime.ts";
import { type HarborTask, HarborTaskError } from "./task.ts";
import type { HarborRuntime, HarborSandbox } from "./types.ts";

/** `[env.docker] hosts` with TLS paths made absolute (relative to the TOML file). */
export function harborHostSpecs(config: HarborConfig, configDir: string) {
  return config.docker.hosts.map((h) => ({
    ...h,
    name: h.name ?? h.url,
    tls: h.tls && {
      ca: resolve(configDir, h.tls.ca),
      cert: resolve(configDir, h.tls.cert),
      key: resolve(configDir, h.tls.key),
    },
  }));
}

interface Host {
  name: string;
  sandboxes: number;
  runtime: DockerHarborRuntime;
  /** Opens under way (counted before the container exists, so concurrent opens spread). */
  starting: number;
}

/**
 * Harbor tasks over several Docker hosts: every task's image is built on every host (cached there by content
 * hash), and each rollout goes to the host with the most free room (open sandboxes ÷ `sandboxes`); when every
 * host is full, `open` waits for a sandbox to close.
 * @example new DockerHostsHarborRuntime(harborHostSpecs(config, dir), { runName, baseImages: {}, allowInternet: false, pidsLimit: 1024 })
 */
export class DockerHostsHarborRuntime implements HarborRuntime {
  readonly kind = "docker" as const;
  private readonly hosts: Host[];
  private readonly waiting: Array<() => void> = [];

  constructor(specs: ReturnType<typeof harborHostSpecs>, options: Omit<DockerHarborOptions, "docker">) {
    this.hosts = specs.map((s) => ({
      name: s.name,
      sandboxes: s.sandboxes,
      runtime: new DockerHarborRuntime({ ...options, docker: dockerClientFor(s) }),
      starting: 0,
    }));
  }

  /** Builds (or finds) the task's image on every host; a failure names the host. */
  async prepare(task: HarborTask): Promise<void> {
    await Promise.all(
      this.hosts.map((h) =>
        h.runtime.prepare(task).catch((error: Error) => {
          if (error instanceof HarborTaskError)
            throw new HarborTaskError(error.folder, error.file, `on docker host ${h.name}: ${error.why}`);
          throw new Error(`docker host ${h.name}: ${error.message}`);
        }),
      ),
    );
  }

  /** The image and settings of a task on the first host (they are the same on all). */
  plan(task: HarborTask) {
    return (this.hosts[0] as Host).runtime.plan(task);
  }

  private pick(): Host | undefined {
    const used = (h: Host) => h.runtime.openCount + h.starting;
    const free = this.hosts.filter((h) => used(h) < h.sandboxes);
    free.sort((a, b) => used(a) / a.sandboxes - used(b) / b.sandboxes);
    return free[0];
  }

  async open(task: HarborTask, options: { rolloutId: string; signal?: AbortSignal }): Promise<HarborSandbox> {
    let host = this.pick();
    while (!host) {
      if (options.signal?.aborted) throw new Error("aborted while waiting for a free docker host");
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        options.signal?.addEventListener("abort", () => resolve(), { once: true });
      });
      host = this.pick();
    }
    host.starting++;
    let sandbox: HarborSandbox;
    try {
      sandbox = await host.runtime.open(task, options);
    } catch (error) {
      this.waiting.shift()?.();
      throw error;
    } finally {
      host.starting--;
    }
    const close = sandbox.close.bind(sandbox);
    sandbox.close = async () => {
      await close();
      this.waiting.shift()?.();
    };
    return sandbox;
  }

  /** Open sandboxes per host name (tests, logs). */
  load(): Record<string, number> {
    return Object.fromEntries(this.hosts.map((h) => [h.name, h.runtime.openCount]));
  }

  async close(): Promise<void> {
    await Promise.all(this.hosts.map((h) => h.runtime.close()));
    for (const wake of this.waiting.splice(0)) wake();
  }
}
