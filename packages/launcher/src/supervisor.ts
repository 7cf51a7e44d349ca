import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { sleep } from "@air/core";
import {
  groupMembers,
  isAlive,
  killGroup,
  killPid,
  type ProcInfo,
  processesWithEnv,
  readProc,
} from "./proc.ts";

/** A process the launcher starts: what to run and how to tell it is ready. */
export interface ChildSpec {
  /** Short name: "inference", "trainer"; also the log file name. */
  role: string;
  argv: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** URLs that must all answer 2xx before the child counts as ready. */
  healthUrls?: string[];
  startupTimeoutMs?: number;
  /** An exit with code 0 is the child finishing its work, not a failure (a trainer past its last step). */
  exitZeroOk?: boolean;
}

/** A started child. */
export interface Supervised {
  spec: ChildSpec;
  pid: number;
  /** Its process group (= pid: each child leads its own group). */
  pgid: number;
  startTime: number;
  logPath: string;
  /** Set once the child exited: exit code or signal name. */
  exit?: { code: number | null; signal: string | null };
  exited: Promise<void>;
}

export interface SupervisorOptions {
  runDir: string;
  /** SIGTERM → SIGKILL grace period. */
  graceMs: number;
  tailLines?: number;
  /** Called when a child exits while the supervisor is not stopping it. */
  onUnexpectedExit?: (child: Supervised, reason: string) => void;
  /** Called when a child starts or stops (pid file, dashboard events). */
  onChange?: (child: Supervised, state: "running" | "ready" | "exited") => void;
}

/** The env var every child carries, so its processes are found even after they left their group. */
export const RUN_MARKER = "AIR_RUN_DIR";

/**
 * Starts children in their own process groups with logs in `<runDir>/logs/<role>.log`, checks readiness
 * over HTTP, reports unexpected exits, and stops everything: SIGTERM to each group, a grace period,
 * SIGKILL, then any straggler still carrying the run's marker.
 * @example
 * const sup = new Supervisor({ runDir, graceMs: 5000, onUnexpectedExit: (c, why) => abort(why) });
 * const server = sup.start({ role: "inference", argv: ["vllm", "serve", "m"], healthUrls: [url] });
 * await sup.waitReady(server, signal);
 * await sup.stopAll();
 */
export class Supervisor {
  readonly children: Supervised[] = [];
  private stopping = false;
  private hurried = false;
  private terminatedAt: number | undefined;
  private readonly processes = new Map<Supervised, ChildProcess>();

  constructor(private readonly options: SupervisorOptions) {
    mkdirSync(join(options.runDir, "logs"), { recursive: true });
  }

  get logDir(): string {
    return join(this.options.runDir, "logs");
  }

  start(spec: ChildSpec): Supervised {
    if (this.stopping) throw new Error(`cannot start ${spec.role}: the run is stopping`);
    const [program, ...args] = spec.argv;
    if (!program) throw new Error(`${spec.role}: empty command`);
    const logPath = join(this.logDir, `${spec.role}.log`);
    const fd = openSync(logPath, "a");
    writeSync(fd, `\n--- ${new Date().toISOString()} starting: ${spec.argv.join(" ")}\n`);
    let proc: ChildProcess;
    try {
      proc = spawn(program, args, {
        cwd: spec.cwd ?? this.options.runDir,
        env: { ...process.env, ...spec.env, [RUN_MARKER]: this.options.runDir },
        detached: true,
        stdio: ["ignore", fd, fd],
      });
    } finally {
      closeSync(fd);
    }
    let resolveExited: () => void = () => {};
    const exited = new Promise<void>((resolve) => {
      resolveExited = resolve;
    });
    const pid = proc.pid ?? -1;
    const child: Supervised = {
      spec,
      pid,
      pgid: pid,
      startTime: readProc(pid)?.startTime ?? 0,
      logPath,
      exited,
    };
    const onGone = (code: number | null, signal: string | null, spawnError?: Error) => {
      if (child.exit) return;
      child.exit = { code, signal };
      resolveExited();
      this.options.onChange?.(child, "exited");
      if (!this.stopping && !(spec.exitZeroOk && code === 0)) {
        const how = spawnError
          ? `could not start (${spawnError.message})`
          : signal
            ? `was killed by ${signal}`
            : `exited with code ${code}`;
        this.options.onUnexpectedExit?.(
          child,
          `${spec.role} ${how}; last lines of ${logPath}:\n${this.tail(child)}`,
        );
      }
    };
    proc.on("exit", (code, signal) => onGone(code, signal));
    proc.on("error", (error) => onGone(null, null, error));
    this.children.push(child);
    this.processes.set(child, proc);
    if (pid > 0) this.options.onChange?.(child, "running");
    return child;
  }

  /** The last lines of a child's log. */
  tail(child: Supervised, lines = this.options.tailLines ?? 20): string {
    try {
      const text = readFileSync(child.logPath, "utf8").trimEnd().split("\n");
      return text
        .slice(-lines)
        .map((l) => `  | ${l}`)
        .join("\n");
    } catch {
      return "  | (no log)";
    }
  }

  /**
   * Resolves once every health URL of `child` answers 2xx. Rejects when the child exits first, when
   * `startupTimeoutMs` passes, or when `signal` aborts; the message carries the child's last log lines.
   */
  async waitReady(child: Supervised, signal?: AbortSignal): Promise<void> {
    const urls = child.spec.healthUrls ?? [];
    const timeoutMs = child.spec.startupTimeoutMs ?? 600_000;
    const deadline = Date.now() + timeoutMs;
    const { role } = child.spec;
    while (true) {
      if (child.exit) {
        throw new Error(
          `${role} exited before it was ready; last lines of ${child.logPath}:\n${this.tail(child)}`,
        );
      }
      if (signal?.aborted) throw new Error(`${role}: aborted while waiting for it to be ready`);
      if (await allHealthy(urls)) {
        this.options.onChange?.(child, "ready");
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `${role} not ready after ${timeoutMs} ms (checked ${urls.join(", ")}); last lines of ${child.logPath}:\n${this.tail(child)}`,
        );
      }
      await Promise.race([sleep(250).catch(() => {}), child.exited]);
    }
  }

  /**
   * Sends SIGTERM to each child's process group, once, without waiting: the launcher calls it as soon as the run
   * is aborted, so children shut down while the orchestrator winds down. No child can be started after it.
   */
  terminate(): void {
    this.stopping = true;
    if (this.terminatedAt !== undefined) return;
    this.terminatedAt = Date.now();
    for (const child of this.children) {
      // A child that exited (a crashed trainer before its restart) is signalled only while its group has members.
      if (child.pid > 0 && (!child.exit || groupMembers(child.pgid).length > 0))
        killGroup(child.pgid, "SIGTERM");
    }
  }

  /**
   * Stops every child: SIGTERM to each process group (unless `terminate` sent it already), `graceMs` from that
   * SIGTERM to exit, then SIGKILL to whatever is left, including processes that left their group but carry the
   * run's marker. Returns what had to be killed.
   */
  async stopAll(graceMs = this.options.graceMs): Promise<string[]> {
    this.terminate();
    const killed: string[] = [];
    const deadline = (this.terminatedAt ?? Date.now()) + graceMs;
    while (Date.now() < deadline && !this.hurried && this.anyAlive()) await sleep(50);
    for (const child of this.children) {
      if (child.pid <= 0) continue;
      if (groupMembers(child.pgid).length > 0) {
        killGroup(child.pgid, "SIGKILL");
        killed.push(
          `${child.spec.role} (process group ${child.pgid}) ${this.hurried ? "still running when told to hurry" : `ignored SIGTERM for ${graceMs} ms`}`,
        );
      }
    }
    for (const p of await killMarked(this.options.runDir)) killed.push(`stray process ${p.pid} (${p.comm})`);
    const waitUntil = Date.now() + 5000;
    for (const child of this.children) {
      if (child.pid > 0) await Promise.race([child.exited, sleep(Math.max(0, waitUntil - Date.now()))]);
    }
    return killed;
  }

  /** Ends the grace period of a running or later `stopAll` now (a second SIGINT). */
  hurry(): void {
    this.hurried = true;
  }

  private anyAlive(): boolean {
    return (
      this.children.some(
        (c) => c.pid > 0 && ((!c.exit && isAlive(c.pid)) || groupMembers(c.pgid).length > 0),
      ) || processesWithEnv(RUN_MARKER, this.options.runDir).length > 0
    );
  }
}

/**
 * SIGKILLs every process carrying the run's marker, scanning again until none is left (a dying shell
 * loop may fork once more between a scan and its kill). Gives up after `rounds` scans.
 */
export async function killMarked(runDir: string, rounds = 50): Promise<ProcInfo[]> {
  const killed: ProcInfo[] = [];
  for (let i = 0; i < rounds; i++) {
    const found = processesWithEnv(RUN_MARKER, runDir);
    if (found.length === 0) break;
    for (const p of found) {
      killPid(p.pid, "SIGKILL");
      if (!killed.some((k) => k.pid === p.pid)) killed.push(p);
    }
    await sleep(20);
  }
  return killed;
}

async function allHealthy(urls: string[]): Promise<boolean> {
  for (const url of urls) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (!res.ok) return false;
    } catch {
      return false;
    }
  }
  return true;
}
