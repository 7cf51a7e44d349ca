import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { dirname, join, posix } from "node:path";
import {
  assertBwrapWorks,
  type BwrapSpec,
  chownTree,
  interpreterPaths,
  passwdFor,
  removeTree,
  runProcess,
} from "@air/sandbox";
import { envList, resolveEnvVars } from "./env-vars.ts";
import { type LocalPlan, localPlan } from "./local-plan.ts";
import { LocalHarborSandbox } from "./local-sandbox.ts";
import { type HarborTask, HarborTaskError } from "./task.ts";
import type { HarborRuntime, HarborSandbox } from "./types.ts";

export interface LocalHarborOptions {
  /** Where sandbox folders live (each rollout's WORKDIR copy, logs, verifier copies). */
  root: string;
  python: string;
  maxProcesses: number;
  baseImages: Record<string, string>;
}

/** uids of this process's sandboxes when air runs as root (a block apart from @air/sandbox's LocalRuntime). */
const UID_BLOCK = 4096;
const uidBase = () => 600_000 + (process.pid % 64) * UID_BLOCK;

/** What a local sandbox needs from its runtime: a spec builder, uids, the env. */
export interface LocalHost {
  asRoot: boolean;
  takeUid(): number;
  giveUid(uid: number): void;
  spec(extra: Partial<BwrapSpec> & Pick<BwrapSpec, "command" | "identity" | "memoryMb">): BwrapSpec;
}

/**
 * Harbor tasks that need no build, on this machine: the agent's WORKDIR (filled by the Dockerfile's COPY lines)
 * is a host folder mounted at the WORKDIR path in a bubblewrap sandbox (the system read-only, no network, own
 * PID namespace, as an unprivileged uid of its own when air runs as root); the verifier runs test.sh in a
 * separate bubblewrap over a copy of that folder, with tests/ mounted read-only at /tests and an empty
 * /logs/verifier, as yet another uid. State outside the WORKDIR (/tmp, installed packages) does not persist.
 * @example const rt = new LocalHarborRuntime({ root: "/tmp/h", python: "/usr/bin/python3", maxProcesses: 512, baseImages: {} });
 */
export class LocalHarborRuntime implements HarborRuntime {
  readonly kind = "local" as const;
  private readonly plans = new Map<string, Promise<LocalPlan & { ok: true }>>();
  private readonly open_ = new Set<HarborSandbox>();
  private readonly usedUids = new Set<number>();
  private counter = 0;
  private roPaths: Promise<string[]> | undefined;
  private checked: Promise<void> | undefined;
  readonly host: LocalHost;

  constructor(private readonly options: LocalHarborOptions) {
    const asRoot = process.getuid?.() === 0;
    this.host = {
      asRoot,
      takeUid: () => this.takeUid(),
      giveUid: (uid) => this.usedUids.delete(uid),
      spec: (extra) => ({
        workspace: "/nonexistent",
        python: options.python,
        maxProcesses: options.maxProcesses,
        ...extra,
      }),
    };
  }

  private takeUid(): number {
    if (!this.host.asRoot) return process.getuid?.() ?? 0;
    for (let i = 0; i < UID_BLOCK; i++) {
      const uid = uidBase() + ((this.counter + i) % UID_BLOCK);
      if (!this.usedUids.has(uid)) {
        this.usedUids.add(uid);
        this.counter = (this.counter + i + 1) % UID_BLOCK;
        return uid;
      }
    }
    throw new Error("no free sandbox uid");
  }

  async prepare(task: HarborTask): Promise<void> {
    await this.plan(task);
  }

  private plan(task: HarborTask): Promise<LocalPlan & { ok: true }> {
    let entry = this.plans.get(task.dir);
    if (!entry) {
      entry = (async () => {
        this.checked ??= assertBwrapWorks(
          this.host.asRoot ? { kind: "setpriv", uid: uidBase() + UID_BLOCK - 1 } : { kind: "userns" },
        );
        await this.checked;
        const plan = await localPlan(task, this.options.baseImages);
        if (!plan.ok)
          throw new HarborTaskError(
            task.dir,
            task.dockerfile ? "environment/Dockerfile" : "task.toml",
            `${plan.reason}; run it with [env] runtime = "docker"`,
          );
        return plan;
      })();
      entry.catch(() => this.plans.delete(task.dir));
      this.plans.set(task.dir, entry);
    }
    return entry;
  }

  async open(task: HarborTask, options: { rolloutId: string }): Promise<HarborSandbox> {
    const plan = await this.plan(task);
    this.roPaths ??= interpreterPaths(this.options.python);
    const roPaths = await this.roPaths;
    await mkdir(this.options.root, { recursive: true });
    const dir = await mkdtemp(join(this.options.root, `${task.name}-`));
    const uid = this.takeUid();
    try {
      const work = join(dir, "work");
      await mkdir(work, { recursive: true });
      for (const { src, dest } of plan.copies) {
        const target = join(work, posix.relative(plan.workdir, dest));
        await mkdir(dirname(target), { recursive: true });
        const out = await runProcess(["cp", "-a", "-T", src, target], { cwd: "/", timeoutMs: 120_000 });
        if (out.exitCode !== 0)
          throw new HarborTaskError(task.dir, "environment/Dockerfile", `COPY ${src}: ${out.stderr.trim()}`);
      }
      await mkdir(join(dir, "logs-agent"), { recursive: true });
      await mkdir(join(dir, "empty"), { recursive: true });
      const passwd = join(dir, "passwd");
      await writeFile(passwd, passwdFor(this.host.asRoot ? uid : 1000));
      if (this.host.asRoot) {
        await chownTree(work, uid);
        await chownTree(join(dir, "logs-agent"), uid);
      }
      const env = { ...plan.env, ...resolveEnvVars(task.config.environment.env) };
      const sandbox = new LocalHarborSandbox(this.host, task, {
        dir,
        work,
        workdir: plan.workdir,
        uid,
        passwd,
        roPaths,
        env: envList(env),
        rolloutId: options.rolloutId,
      });
      await sandbox.startShell(plan.workdir);
      this.open_.add(sandbox);
      const close = sandbox.close.bind(sandbox);
      sandbox.close = async () => {
        this.open_.delete(sandbox);
        await close();
        this.usedUids.delete(uid);
      };
      return sandbox;
    } catch (error) {
      this.usedUids.delete(uid);
      await removeTree(dir);
      throw error;
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.open_].map((s) => s.close()));
  }
}

/** The text of a file, or undefined when it does not exist. */
export async function readIfThere(path: string): Promise<string | undefined> {
  return readFile(path, "utf8").catch(() => undefined);
}
