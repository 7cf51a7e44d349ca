import { containerLabels, dockerClient, withTimeout } from "@air/sandbox";
import type Docker from "dockerode";
import { type ContainerPlan, DockerHarborSandbox, startContainer } from "./docker-sandbox.ts";
import { envList, resolveEnvVars } from "./env-vars.ts";
import { taskImage } from "./image.ts";
import type { HarborTask } from "./task.ts";
import { internetAllowed } from "./task-config.ts";
import type { HarborRuntime, HarborSandbox } from "./types.ts";

export interface DockerHarborOptions {
  /** The run's label value (`air.run`): the launcher's teardown removes what carries it. */
  runName: string;
  baseImages: Record<string, string>;
  /** false: no network for any task; true: as each task's allow_internet says. */
  allowInternet: boolean;
  pidsLimit: number;
  docker?: Docker;
  onState?: (state: { id: string; rolloutId?: string; state: string }) => void;
}

/**
 * Harbor tasks on one Docker engine: each task's image is built once per content hash (or its prebuilt image
 * used), each rollout gets a fresh container of it with the task's cpus, memory and network, and the verifier a
 * fresh container of the agent's final state. Everything is labelled with the run for teardown.
 * @example const rt = new DockerHarborRuntime({ runName, baseImages: {}, allowInternet: false, pidsLimit: 1024 });
 */
export class DockerHarborRuntime implements HarborRuntime {
  readonly kind = "docker" as const;
  readonly docker: Docker;
  private readonly images = new Map<string, Promise<{ image: string; workdir: string; user: string }>>();
  private readonly open_ = new Set<HarborSandbox>();

  constructor(private readonly options: DockerHarborOptions) {
    this.docker = options.docker ?? dockerClient();
  }

  private image(task: HarborTask): Promise<{ image: string; workdir: string; user: string }> {
    let entry = this.images.get(task.dir);
    if (!entry) {
      entry = taskImage(this.docker, task, this.options.baseImages).then(async (image) => {
        const info = await withTimeout(this.docker.getImage(image).inspect(), 30_000, "docker image inspect");
        return { image, workdir: info.Config?.WorkingDir || "/", user: info.Config?.User || "root" };
      });
      entry.catch(() => this.images.delete(task.dir));
      this.images.set(task.dir, entry);
    }
    return entry;
  }

  async prepare(task: HarborTask): Promise<void> {
    await this.image(task);
  }

  /** The container settings of a task: its image, WORKDIR, users, network and limits. */
  async plan(task: HarborTask): Promise<ContainerPlan> {
    const { image, workdir, user } = await this.image(task);
    const c = task.config;
    const name = (u: string | number | undefined) => (u === undefined ? user : String(u));
    return {
      image,
      workdir,
      agentUser: name(c.agent.user),
      verifierUser: name(c.verifier.user),
      network: this.options.allowInternet && internetAllowed(c) ? "bridge" : "none",
      memoryMb: c.environment.memory_mb,
      cpus: c.environment.cpus,
      pidsLimit: this.options.pidsLimit,
      env: envList(resolveEnvVars(c.environment.env)),
      runName: this.options.runName,
    };
  }

  async open(task: HarborTask, options: { rolloutId: string; signal?: AbortSignal }): Promise<HarborSandbox> {
    const plan = await this.plan(task);
    const labels = {
      ...containerLabels(this.options.runName, options.rolloutId),
      "air.harbor.task": task.name,
    };
    const { container, keep } = await startContainer(this.docker, plan, plan.image, labels);
    const sandbox = new DockerHarborSandbox(this.docker, container, keep, task, plan, options.rolloutId);
    try {
      await sandbox.init();
    } catch (error) {
      await sandbox.close();
      throw error;
    }
    this.options.onState?.({ id: sandbox.id, rolloutId: options.rolloutId, state: "busy" });
    this.open_.add(sandbox);
    const close = sandbox.close.bind(sandbox);
    sandbox.close = async () => {
      this.open_.delete(sandbox);
      await close();
      this.options.onState?.({ id: sandbox.id, state: "removed" });
    };
    return sandbox;
  }

  /** Sandboxes open now (for placement over several hosts). */
  get openCount(): number {
    return this.open_.size;
  }

  async close(): Promise<void> {
    await Promise.all([...this.open_].map((s) => s.close()));
  }
}
