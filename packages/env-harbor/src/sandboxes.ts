import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import {
  DockerHostsRuntime,
  DockerRuntime,
  forkSandbox,
  ImageBuildError,
  LocalRuntime,
  type Runtime,
  runProcess,
  type Sandbox,
  type SnapshotHandle,
  type TaskEnvironment,
  type TaskFiles,
} from "@air/sandbox";
import type { HarborConfig } from "./config.ts";
import { resolveEnvVars } from "./env-vars.ts";
import { localPlan } from "./local-plan.ts";
import { HARBOR_PATHS, type HarborTask, HarborTaskError } from "./task.ts";
import { internetAllowed } from "./task-config.ts";

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

/** Lower-case, registry-safe repository name of a task folder. */
function repoName(task: HarborTask): string {
  const name = task.name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "");
  return `air-harbor/${name || "task"}`;
}

/** A task's bundle key: its name and where its folder is (two datasets may share a task name). */
function keyOf(task: HarborTask): string {
  return `harbor-${task.name}-${createHash("sha256").update(task.dir).digest("hex").slice(0, 8)}`;
}

type OnState = (state: { id: string; rolloutId?: string; state: string }) => void;

/**
 * The `@air/sandbox` runtime of a harbor config: `LocalRuntime` (bubblewrap), one engine's `DockerRuntime`, or
 * `DockerHostsRuntime` over `docker.hosts`. Docker runtimes get no image of their own: every task brings one.
 * @example const runtime = harborRuntime(config, { configDir, runName: runDir, root: `${runDir}/harbor-sandboxes` });
 */
export function harborRuntime(
  config: HarborConfig,
  ctx: { configDir: string; runName: string; root: string; onState?: OnState },
): Runtime {
  if (config.runtime === "local")
    return new LocalRuntime({
      root: ctx.root,
      python: config.local.python,
      maxProcesses: config.local.max_processes,
      onState: ctx.onState,
    });
  const base = {
    user: "root",
    workspace: "/",
    memoryMb: 2048,
    cpus: 1,
    pidsLimit: config.docker.pids_limit,
    network: "none",
    runName: ctx.runName,
    timeoutMs: 60_000,
    onState: ctx.onState,
  };
  if (config.docker.hosts.length === 0) return new DockerRuntime({ ...base, gpuIds: [], poolSize: 0 });
  const hosts = harborHostSpecs(config, ctx.configDir).map((h) => ({ ...h, gpuIds: [], poolSize: 0 }));
  return new DockerHostsRuntime(hosts, { base, requireGpu: false, probeMs: 5000 });
}

/**
 * Harbor tasks on an `@air/sandbox` runtime: each task becomes a `TaskFiles` whose `environment` carries what
 * task.toml asks (docker: the build of `environment/` after `base_images`, or the prebuilt `docker_image`; the
 * agent user, env, cpus, memory, network; local: the WORKDIR filled by the Dockerfile's COPY lines), and a
 * bundle folder (docker: empty, the image is the workspace; local: the WORKDIR's files). Errors name the task
 * folder and the file.
 * @example const boxes = new HarborSandboxes(runtime, config, root); await boxes.prepare(task); const s = await boxes.open(task, { rolloutId: "r1" });
 */
export class HarborSandboxes {
  private readonly files = new Map<string, Promise<TaskFiles>>();
  private readonly bundles: string[] = [];

  constructor(
    readonly runtime: Runtime,
    private readonly config: Pick<HarborConfig, "base_images" | "allow_internet">,
    /** Where task bundles are laid out (local: the WORKDIR's files). */
    private readonly root: string,
  ) {}

  get kind(): "docker" | "local" {
    return this.runtime.kind;
  }

  /** The task's files and environment (made once per task). */
  filesOf(task: HarborTask): Promise<TaskFiles> {
    let entry = this.files.get(task.dir);
    if (!entry) {
      entry = this.kind === "local" ? this.localFiles(task) : this.dockerFiles(task);
      entry.catch(() => this.files.delete(task.dir));
      this.files.set(task.dir, entry);
    }
    return entry;
  }

  private bundle(task: HarborTask): string {
    mkdirSync(this.root, { recursive: true });
    const dir = mkdtempSync(join(this.root, `bundle-${task.name}-`));
    this.bundles.push(dir);
    mkdirSync(join(dir, "workspace"));
    mkdirSync(join(dir, "evaluation"));
    return dir;
  }

  private common(task: HarborTask): TaskEnvironment {
    const c = task.config;
    return {
      env: resolveEnvVars(c.environment.env),
      cpus: c.environment.cpus,
      memoryMb: c.environment.memory_mb,
      dirs: [HARBOR_PATHS.agentLogs, HARBOR_PATHS.verifierLogs],
    };
  }

  private async dockerFiles(task: HarborTask): Promise<TaskFiles> {
    const c = task.config;
    const mapping = this.config.base_images;
    const given = c.environment.docker_image;
    const environment: TaskEnvironment = {
      ...this.common(task),
      user: c.agent.user === undefined ? undefined : String(c.agent.user),
      network: this.config.allow_internet && internetAllowed(c) ? "bridge" : "none",
    };
    if (task.dockerfile)
      environment.build = {
        context: join(task.dir, "environment"),
        repo: repoName(task),
        baseImages: mapping,
        timeoutMs: c.environment.build_timeout_sec * 1000,
        timeoutKey: "[environment] build_timeout_sec",
        labels: { "air.harbor.task": task.name },
      };
    else environment.image = mapping[given ?? ""] ?? given;
    return { key: keyOf(task), dir: this.bundle(task), readOnly: [], environment };
  }

  private async localFiles(task: HarborTask): Promise<TaskFiles> {
    const plan = await localPlan(task, this.config.base_images);
    if (!plan.ok)
      throw new HarborTaskError(
        task.dir,
        task.dockerfile ? "environment/Dockerfile" : "task.toml",
        `${plan.reason}; run it with [env] runtime = "docker"`,
      );
    const dir = this.bundle(task);
    for (const { src, dest } of plan.copies) {
      const target = join(dir, "workspace", posix.relative(plan.workdir, dest));
      mkdirSync(dirname(target), { recursive: true });
      const out = await runProcess(["cp", "-a", "-T", src, target], { cwd: "/", timeoutMs: 120_000 });
      if (out.exitCode !== 0)
        throw new HarborTaskError(task.dir, "environment/Dockerfile", `COPY ${src}: ${out.stderr.trim()}`);
    }
    const common = this.common(task);
    const environment = { ...common, workdir: plan.workdir, env: { ...plan.env, ...common.env } };
    return { key: keyOf(task), dir, readOnly: [], environment };
  }

  /**
   * Makes the task ready: docker builds (or finds) its image on every engine; local checks it needs no build and
   * that bubblewrap works. Returns what it made ready; throws a {@link HarborTaskError}.
   */
  async prepare(task: HarborTask): Promise<string> {
    const files = await this.filesOf(task);
    if (this.runtime instanceof LocalRuntime) {
      await this.runtime.check();
      return `runs locally in ${files.environment?.workdir}`;
    }
    try {
      return (await this.runtime.prepareTask?.(files)) ?? "ready";
    } catch (error) {
      if (!(error instanceof ImageBuildError)) throw error;
      const hint =
        error.kind === "base"
          ? `; build or load it, or map it to a local image with [env] base_images = { "${error.images[0]}" = "air-mlgym-test:latest" }`
          : error.kind === "image"
            ? " (load it, or map it with [env] base_images)"
            : "";
      const file = error.kind === "image" ? "task.toml" : "environment/Dockerfile";
      const what = error.kind === "image" ? `[environment] docker_image: ${error.message}` : error.message;
      throw new HarborTaskError(task.dir, file, `${what}${hint}`);
    }
  }

  /** A sandbox of the task: fresh, or restored from a stored snapshot (`restore`, `rl --resume`). */
  async open(
    task: HarborTask,
    options: { rolloutId: string; signal?: AbortSignal; restore?: SnapshotHandle },
  ): Promise<Sandbox> {
    return this.runtime.acquire(await this.filesOf(task), options);
  }

  /** A new sandbox in `from`'s state now (tree rollouts). */
  async fork(task: HarborTask, from: Sandbox, rolloutId: string): Promise<Sandbox> {
    return forkSandbox(this.runtime, from, await this.filesOf(task), { rolloutId });
  }

  release(sandbox: Sandbox): Promise<void> {
    return this.runtime.release(sandbox, true);
  }

  async close(): Promise<void> {
    await this.runtime.close();
    for (const dir of this.bundles.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}
