import { randomBytes } from "node:crypto";
import { join } from "node:path";
import {
  type ContainerShell,
  containerLabels,
  execWithTimeout,
  openContainerShell,
  shellQuote,
  withTimeout,
} from "@air/sandbox";
import type Docker from "dockerode";
import { execOnce, rootScript, tarOf } from "./docker-exec.ts";
import { envList, resolveEnvVars } from "./env-vars.ts";
import { HARBOR_PATHS, type HarborTask } from "./task.ts";
import type { CommandResult, HarborSandbox, VerifierRun } from "./types.ts";

/** How the runtime creates containers for a task (resolved from the task.toml and the env config). */
export interface ContainerPlan {
  image: string;
  workdir: string;
  /** `[agent] user`, else the image's USER, else root. */
  agentUser: string;
  /** `[verifier] user`, else the image's USER, else root. */
  verifierUser: string;
  network: "none" | "bridge";
  memoryMb: number;
  cpus: number;
  pidsLimit: number;
  /** `[environment] env`, resolved. */
  env: string[];
  runName: string;
}

const CONTROL_TIMEOUT_MS = 60_000;

/** Kills every process in the container but PID 1, the keep-alive `sleep` and the shell running this. */
function killAllScript(keep: string): string {
  return `for d in /proc/[0-9]*; do p=\${d#/proc/}; case " 1 ${keep} $$ " in *" $p "*) ;; *) kill -9 "$p" 2>/dev/null;; esac; done; true`;
}

/** Host config shared by the agent's and the verifier's containers (the task's cpus, memory, network). */
export function hostConfig(plan: ContainerPlan): Docker.HostConfig {
  return {
    NetworkMode: plan.network,
    Memory: plan.memoryMb * 1024 * 1024,
    NanoCpus: Math.round(plan.cpus * 1e9),
    PidsLimit: plan.pidsLimit,
    Init: true,
    SecurityOpt: ["no-new-privileges"],
  };
}

/** Creates and starts a `sleep infinity` container of `image`; returns it and the keep-alive's pid. */
export async function startContainer(
  docker: Docker,
  plan: ContainerPlan,
  image: string,
  labels: Record<string, string>,
): Promise<{ container: Docker.Container; keep: string }> {
  const container = await withTimeout(
    docker.createContainer({
      Image: image,
      Entrypoint: [],
      Cmd: ["sleep", "infinity"],
      User: "root",
      WorkingDir: plan.workdir,
      Env: plan.env,
      Labels: labels,
      HostConfig: hostConfig(plan),
    }),
    CONTROL_TIMEOUT_MS,
    "docker create",
  );
  try {
    await withTimeout(container.start(), CONTROL_TIMEOUT_MS, "docker start");
    const keep = (await rootScript(container, "cat /proc/1/task/1/children", CONTROL_TIMEOUT_MS)).trim();
    return { container, keep };
  } catch (error) {
    await container.remove({ force: true }).catch(() => undefined);
    throw error;
  }
}

/**
 * One rollout's container of a Harbor task: the agent's persistent shell as the task's agent user in the
 * image's WORKDIR; tests/ and solution/ never enter it (the oracle's solution is copied in, run and removed).
 * The verifier commits this container's filesystem to an image and runs tests/test.sh in a new container of it.
 */
export class DockerHarborSandbox implements HarborSandbox {
  readonly id: string;
  readonly workdir: string;
  private shell: ContainerShell | undefined;
  private cwd: string;

  constructor(
    private readonly docker: Docker,
    readonly container: Docker.Container,
    private readonly keep: string,
    private readonly task: HarborTask,
    private readonly plan: ContainerPlan,
    private readonly rolloutId: string,
  ) {
    this.id = container.id.slice(0, 12);
    this.workdir = plan.workdir;
    this.cwd = plan.workdir;
  }

  /** Creates /logs/agent and /logs/verifier (as Harbor mounts them) and starts the agent's shell. */
  async init(): Promise<void> {
    await rootScript(
      this.container,
      `mkdir -p ${HARBOR_PATHS.agentLogs} ${HARBOR_PATHS.verifierLogs} && chmod 777 ${HARBOR_PATHS.agentLogs} ${HARBOR_PATHS.verifierLogs}`,
      CONTROL_TIMEOUT_MS,
    );
    await this.startShell(this.workdir);
  }

  private async startShell(cwd: string): Promise<void> {
    this.shell?.close();
    this.shell = await openContainerShell(this.container, {
      user: this.plan.agentUser,
      cwd,
      env: [...this.plan.env, "LANG=C.UTF-8"],
      timeoutMs: CONTROL_TIMEOUT_MS,
    });
    this.cwd = cwd;
  }

  private async existingCwd(): Promise<string> {
    const out = await rootScript(
      this.container,
      `[ -d ${shellQuote(this.cwd)} ] && printf %s ${shellQuote(this.cwd)} || printf %s ${shellQuote(this.workdir)}`,
      CONTROL_TIMEOUT_MS,
    );
    return out || this.workdir;
  }

  async exec(command: string, timeoutMs: number): Promise<CommandResult> {
    if (!this.shell) await this.startShell(await this.existingCwd());
    const shell = this.shell as ContainerShell;
    const result = await execWithTimeout(shell.shell, command, timeoutMs, this.cwd, {
      restart: async () => {
        await this.startShell(await this.existingCwd());
        return this.cwd;
      },
      killAndRestart: async () => {
        await rootScript(this.container, killAllScript(this.keep), CONTROL_TIMEOUT_MS);
        await this.startShell(await this.existingCwd());
        return this.cwd;
      },
    });
    this.cwd = result.cwd || this.cwd;
    return { output: result.output, exitCode: result.exitCode, timedOut: result.timedOut };
  }

  async runSolution(timeoutMs: number): Promise<CommandResult> {
    if (!this.task.solution)
      return { output: "this task has no solution/solve.sh", exitCode: 1, timedOut: false };
    const dir = HARBOR_PATHS.solution;
    await rootScript(this.container, `rm -rf ${dir} && mkdir -p ${dir}`, CONTROL_TIMEOUT_MS);
    await withTimeout(
      this.container.putArchive(await tarOf(join(this.task.dir, "solution")), { path: dir }),
      CONTROL_TIMEOUT_MS,
      "putArchive solution",
    );
    await rootScript(this.container, `chmod -R a+rX ${dir} && chmod +x ${dir}/solve.sh`, CONTROL_TIMEOUT_MS);
    const env = Object.entries(resolveEnvVars(this.task.config.solution.env)).map(
      ([k, v]) => `${k}=${shellQuote(v)}`,
    );
    try {
      return await this.exec(`${env.length ? `env ${env.join(" ")} ` : ""}bash ${dir}/solve.sh`, timeoutMs);
    } finally {
      await rootScript(this.container, `rm -rf ${dir}`, CONTROL_TIMEOUT_MS);
    }
  }

  async verify(): Promise<VerifierRun> {
    const started = Date.now();
    const tag = `v${randomBytes(6).toString("hex")}`;
    await withTimeout(
      this.container.commit({ repo: "air-harbor-verify", tag, pause: true }),
      this.task.config.verifier.timeout_sec * 1000 + CONTROL_TIMEOUT_MS,
      "docker commit of the agent's container",
    );
    const image = `air-harbor-verify:${tag}`;
    let verifier: Docker.Container | undefined;
    try {
      const labels = {
        ...containerLabels(this.plan.runName, `${this.rolloutId}-verifier`),
        "air.harbor.task": this.task.name,
      };
      const started_ = await startContainer(this.docker, this.plan, image, labels);
      verifier = started_.container;
      const { tests, verifierLogs } = HARBOR_PATHS;
      await rootScript(
        verifier,
        `rm -rf ${tests} ${verifierLogs} && mkdir -p ${tests} ${verifierLogs} && chmod 777 ${verifierLogs}`,
        CONTROL_TIMEOUT_MS,
      );
      await withTimeout(
        verifier.putArchive(await tarOf(join(this.task.dir, "tests")), { path: tests }),
        CONTROL_TIMEOUT_MS,
        "putArchive tests",
      );
      await rootScript(
        verifier,
        `chown -R root:root ${tests} && chmod -R a+rX ${tests} && chmod +x ${tests}/test.sh`,
        CONTROL_TIMEOUT_MS,
      );
      const env = envList(resolveEnvVars(this.task.config.verifier.env));
      const run = await execOnce(
        verifier,
        ["sh", "-c", `${tests}/test.sh > ${HARBOR_PATHS.testStdout} 2>&1`],
        {
          user: this.plan.verifierUser,
          cwd: this.workdir,
          env: [...this.plan.env, ...env],
          timeoutMs: this.task.config.verifier.timeout_sec * 1000,
        },
      );
      if (run.timedOut) return { output: "", exitCode: 137, timedOut: true, ms: Date.now() - started };
      const read = async (path: string) => {
        const r = await execOnce(
          verifier as Docker.Container,
          ["sh", "-c", `[ -f ${path} ] && base64 ${path}`],
          { user: "root", timeoutMs: CONTROL_TIMEOUT_MS },
        );
        return r.exitCode === 0
          ? Buffer.from(r.stdout.replace(/\s+/g, ""), "base64").toString("utf8")
          : undefined;
      };
      const output = await read(HARBOR_PATHS.testStdout);
      return {
        rewardText: await read(HARBOR_PATHS.rewardText),
        rewardJson: await read(HARBOR_PATHS.rewardJson),
        output: (output ?? "").slice(-20_000),
        exitCode: run.exitCode,
        timedOut: false,
        ms: Date.now() - started,
      };
    } finally {
      await verifier?.remove({ force: true, v: true }).catch(() => undefined);
      await this.docker
        .getImage(image)
        .remove({ force: true, noprune: false })
        .catch(() => undefined);
    }
  }

  async writtenBytes(): Promise<number | undefined> {
    // dockerode's types lack inspect's `size` option; the Engine API takes it (GET /containers/{id}/json?size=1).
    const inspect = this.container.inspect.bind(this.container) as unknown as (o: {
      size: boolean;
    }) => Promise<{ SizeRw?: number }>;
    const info = await withTimeout(inspect({ size: true }), CONTROL_TIMEOUT_MS, "docker inspect");
    return info.SizeRw;
  }

  async close(): Promise<void> {
    this.shell?.close();
    this.shell = undefined;
    await withTimeout(this.container.remove({ force: true, v: true }), 30_000, "docker remove").catch(
      () => undefined,
    );
  }
}
