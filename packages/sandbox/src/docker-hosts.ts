import type Docker from "dockerode";
import { DockerRuntime } from "./docker.ts";
import { dockerClientFor, pingDocker } from "./docker-client.ts";
import type { DockerHostSpec, DockerHostsOptions, HostState } from "./docker-hosts-types.ts";
import { HostedSandbox, hostLevel, raceDrain } from "./hosted-sandbox.ts";
import { ImageBuildError } from "./image-build.ts";
import type { SnapshotStore } from "./snapshot-store.ts";
import { removeContainersByLabel } from "./teardown.ts";
import type { AcquireOptions, Runtime, Sandbox, SnapshotHandle, TaskFiles } from "./types.ts";

/**
 * Sandboxes on several Docker hosts. Each host has its own `DockerRuntime` (its own warm pool and GPU ids); a
 * sandbox goes to the host in rotation with the most free room (free slots ÷ slots; with `requireGpu` only
 * hosts with GPUs); when every host is full, `acquire` waits for a release. Every host is pinged every
 * `probeMs`: one that does not answer is drained — it takes no sandboxes, and every call of its sandboxes
 * in flight fails at once (the rollout loop retries those rollouts, which land on other hosts) — and is pinged
 * until it has answered every ping for max(5 s, 3 probes) (a daemon shutting down still answers some); then its
 * leftover containers of this run are removed, it gets a fresh pool, and it is back.
 * A sandbox whose acquire fails on a host is tried on the other hosts (the error is thrown when none is left);
 * that host is drained when the error is the daemon's (no connection, a reset, a 5xx) or it misses a ping.
 * @example
 * const runtime = new DockerHostsRuntime(hosts, { base, requireGpu: false, probeMs: 2000 });
 * const sandbox = await runtime.acquire(files, { rolloutId: "r1" });
 */
export class DockerHostsRuntime implements Runtime {
  readonly kind = "docker" as const;
  readonly hosts: HostState[];
  private readonly waiters: Array<() => void> = [];
  private readonly timer: ReturnType<typeof setInterval>;
  private probing = false;
  private closed = false;
  /** How long a drained host must answer every ping before it is readmitted. */
  private readonly readmitMs: number;

  constructor(
    specs: DockerHostSpec[],
    private readonly options: DockerHostsOptions,
  ) {
    if (specs.length === 0) throw new Error("DockerHostsRuntime needs at least one host");
    const o = options.base;
    this.hosts = specs.map((spec) => {
      const docker = dockerClientFor(spec);
      const limits = [spec.sandboxes];
      if (spec.cpus !== undefined) limits.push(Math.floor(spec.cpus / o.cpus));
      if (spec.memoryMb !== undefined) limits.push(Math.floor(spec.memoryMb / o.memoryMb));
      return {
        spec,
        docker,
        runtime: this.hostRuntime(spec, docker),
        up: true,
        busy: 0,
        slots: Math.max(0, Math.min(...limits)),
        placed: 0,
        drains: 0,
        drained: new AbortController(),
      };
    });
    if (!this.hosts.some((h) => this.eligible(h))) {
      throw new Error(
        options.requireGpu
          ? "no docker host has gpu_ids (docker.require_gpu is set)"
          : "no docker host has room for one sandbox (sandboxes, cpus, memory_mb)",
      );
    }
    this.readmitMs = Math.max(5000, 3 * options.probeMs);
    this.timer = setInterval(() => void this.probe(), options.probeMs);
    // never what keeps the process alive (an env that failed after creating its runtime)
    this.timer.unref?.();
  }

  async acquire(files: TaskFiles, options: AcquireOptions): Promise<Sandbox> {
    // hosts whose acquire failed in this call: the sandbox is tried on the others first
    const tried = new Set<HostState>();
    let lastError: unknown;
    for (;;) {
      if (this.closed) throw new Error("docker hosts runtime is closed");
      options.signal?.throwIfAborted();
      const host = this.place(tried);
      if (host === undefined) {
        const untried = this.hosts.some((h) => h.up && this.eligible(h) && !tried.has(h));
        if (lastError !== undefined && !untried) throw lastError;
        await this.waitForRoom(options.signal);
        continue;
      }
      host.busy++;
      host.placed++;
      const drained = host.drained.signal;
      try {
        const inner = await raceDrain(host.runtime.acquire(files, options), drained, host);
        return new HostedSandbox(inner, host, drained);
      } catch (error) {
        if (!drained.aborted) host.busy--;
        this.wake();
        tried.add(host);
        lastError = error;
        // a daemon shutting down still answers pings but refuses containers: drain on the error itself too
        if (drained.aborted || hostLevel(error) || !(await this.answers(host))) this.drain(host, error);
      }
    }
  }

  /** Makes the task ready on every host that is up (its image built there); a failure names the host. */
  async prepareTask(files: TaskFiles): Promise<string> {
    const lines = await Promise.all(
      this.hosts
        .filter((h) => h.up)
        .map((h) =>
          h.runtime.prepareTask(files).then(
            (line) => `${h.spec.name}: ${line}`,
            (error: Error) => {
              throw error instanceof ImageBuildError
                ? new ImageBuildError(
                    error.kind,
                    `on docker host ${h.spec.name}: ${error.message}`,
                    error.images,
                  )
                : new Error(`docker host ${h.spec.name}: ${error.message}`);
            },
          ),
        ),
    );
    return lines.join("; ");
  }

  /** A copy of live `from` on `from`'s own host (it counts against that host's room). */
  async fork(from: Sandbox, files: TaskFiles, options: AcquireOptions): Promise<Sandbox> {
    if (!(from instanceof HostedSandbox)) throw new Error("not a sandbox of this runtime");
    const host = from.host;
    host.busy++;
    host.placed++;
    const drained = host.drained.signal;
    try {
      return new HostedSandbox(
        await raceDrain(host.runtime.fork(from.inner, files, options), drained, host),
        host,
        drained,
      );
    } catch (error) {
      if (!drained.aborted) host.busy--;
      this.wake();
      throw error;
    }
  }

  async release(sandbox: Sandbox, discard = false): Promise<void> {
    if (!(sandbox instanceof HostedSandbox)) throw new Error("not a sandbox of this runtime");
    const host = sandbox.host;
    // a drained host's count starts again at readmission, and its containers are removed then
    if (sandbox.drained.aborted) return;
    host.busy--;
    this.wake();
    await host.runtime.release(sandbox.inner, discard);
  }

  /** Saved by the sandbox's host; the tar stays on this machine, so a restore may land on any host. */
  saveSnapshot(sandbox: Sandbox, store: SnapshotStore, id: string): Promise<SnapshotHandle> {
    if (!(sandbox instanceof HostedSandbox)) throw new Error("not a sandbox of this runtime");
    return raceDrain(
      sandbox.host.runtime.saveSnapshot(sandbox.inner, store, id),
      sandbox.drained,
      sandbox.host,
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.wake();
    await Promise.all(
      this.hosts.map((h) => (h.up ? h.runtime.close().catch(() => undefined) : Promise.resolve())),
    );
  }

  /** The host in rotation (not in `skip`) with the most free room, or undefined when all are full. */
  private place(skip?: Set<HostState>): HostState | undefined {
    let best: HostState | undefined;
    let bestFree = 0;
    for (const h of this.hosts) {
      if (!h.up || !this.eligible(h) || h.busy >= h.slots || skip?.has(h)) continue;
      const free = (h.slots - h.busy) / h.slots;
      if (best === undefined || free > bestFree) {
        best = h;
        bestFree = free;
      }
    }
    return best;
  }

  private eligible(h: HostState): boolean {
    return h.slots > 0 && (!this.options.requireGpu || h.spec.gpuIds.length > 0);
  }

  private waitForRoom(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal?.reason ?? new Error("aborted"));
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  }

  private wake(): void {
    for (const go of this.waiters.splice(0)) go();
  }

  private async answers(host: HostState): Promise<boolean> {
    try {
      // generous: a loaded machine answers a ping over TLS slowly, and a false drain loses rollouts
      await pingDocker(host.docker, Math.max(3000, this.options.probeMs));
      return true;
    } catch {
      return false;
    }
  }

  /** Takes `host` out: no new sandboxes, every call of its sandboxes in flight fails now. */
  drain(host: HostState, error: unknown): void {
    if (!host.up) return;
    host.up = false;
    host.answeringSince = undefined;
    host.drains++;
    const why = error instanceof Error ? error.message : String(error);
    host.drained.abort(new Error(`docker host ${host.spec.name} stopped answering (${why}); drained`));
    this.options.log?.(
      "warn",
      `docker host ${host.spec.name} drained (${host.busy} sandbox(es) in use lost): ${why}`,
    );
    this.options.onHost?.({ host: host.spec.name, state: "drained", busy: host.busy, slots: host.slots });
    this.wake();
  }

  /** One health round: drains hosts that stopped answering, readmits drained ones that answer again. */
  private async probe(): Promise<void> {
    if (this.probing || this.closed) return;
    this.probing = true;
    try {
      await Promise.all(
        this.hosts.map(async (h) => {
          const ok = await this.answers(h);
          if (!ok) h.answeringSince = undefined;
          else h.answeringSince ??= Date.now();
          const steady = h.answeringSince !== undefined && Date.now() - h.answeringSince >= this.readmitMs;
          if (h.up && !ok) this.drain(h, new Error("no answer to a ping"));
          // a daemon shutting down still answers some pings: readmit only after it answered steadily
          else if (!h.up && steady && !this.closed) await this.readmit(h);
        }),
      );
    } finally {
      this.probing = false;
    }
  }

  private async readmit(host: HostState): Promise<void> {
    try {
      const removed = await removeContainersByLabel(host.docker, this.options.base.runName);
      host.runtime = this.hostRuntime(host.spec, host.docker);
      host.drained = new AbortController();
      host.busy = 0;
      host.up = true;
      this.options.log?.(
        "info",
        `docker host ${host.spec.name} answers again: back in rotation (${removed.length} leftover container(s) removed)`,
      );
      this.options.onHost?.({ host: host.spec.name, state: "up", busy: 0, slots: host.slots });
      this.wake();
    } catch (error) {
      this.options.log?.("warn", `docker host ${host.spec.name} not readmitted yet: ${String(error)}`);
    }
  }

  private hostRuntime(spec: DockerHostSpec, docker: Docker): DockerRuntime {
    const onState = this.options.onSandbox;
    return new DockerRuntime({
      ...this.options.base,
      docker,
      gpuIds: spec.gpuIds,
      poolSize: spec.poolSize,
      ...(onState ? { onState: (state) => onState({ ...state, host: spec.name }) } : {}),
    });
  }
}
