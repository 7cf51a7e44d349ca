import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp } from "node:fs/promises";
import { join, posix } from "node:path";
import {
  type BwrapSpec,
  bwrapInvocation,
  chownTree,
  execWithTimeout,
  killGroup,
  removeTree,
  runProcess,
  type SentinelShell,
  sandboxEnv,
  shellQuote,
  startBwrapShell,
} from "@air/sandbox";
import { envList, resolveEnvVars } from "./env-vars.ts";
import { type LocalHost, readIfThere } from "./local-runtime.ts";
import { HARBOR_PATHS, type HarborTask } from "./task.ts";
import type { CommandResult, HarborSandbox, VerifierRun } from "./types.ts";

/** Where one local sandbox lives on the host and who runs in it. */
export interface LocalLayout {
  /** The sandbox's host folder (removed at close). */
  dir: string;
  /** Host folder mounted read-write at `workdir`. */
  work: string;
  workdir: string;
  uid: number;
  passwd: string;
  roPaths: string[];
  env: string[];
  rolloutId: string;
}

function envRecord(list: string[]): Record<string, string> {
  return Object.fromEntries(list.map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
}

/**
 * One rollout of a Harbor task in bubblewrap: the agent's bash runs in a namespace that sees the system
 * read-only, its WORKDIR (a host folder) read-write, /logs/agent, and nothing of the task folder; killing it
 * ends every process it started. tests/ and solution/ are only mounted into the verifier's and the oracle's own
 * one-off sandboxes.
 */
export class LocalHarborSandbox implements HarborSandbox {
  readonly id: string;
  readonly workdir: string;
  private child: ChildProcess | undefined;
  private shell: SentinelShell | undefined;
  private cwd: string;
  private verifications = 0;

  constructor(
    private readonly host: LocalHost,
    private readonly task: HarborTask,
    private readonly layout: LocalLayout,
  ) {
    this.id = `local-${layout.dir.split("/").pop()}`;
    this.workdir = layout.workdir;
    this.cwd = layout.workdir;
  }

  /** The agent's sandbox: WORKDIR and /logs/agent writable, as the agent's uid, with `extra` mounts. */
  private agentSpec(command: string[], cwd: string, binds: BwrapSpec["binds"] = []): BwrapSpec {
    const l = this.layout;
    return this.host.spec({
      workspace: join(l.dir, "empty"),
      roPaths: l.roPaths,
      passwd: l.passwd,
      identity: this.host.asRoot ? { kind: "setpriv", uid: l.uid } : { kind: "userns" },
      memoryMb: this.task.config.environment.memory_mb,
      binds: [
        { src: l.work, dest: l.workdir, readOnly: false },
        { src: join(l.dir, "logs-agent"), dest: HARBOR_PATHS.agentLogs, readOnly: false },
        ...binds,
      ],
      cwd,
      command,
    });
  }

  private processEnv(extra: string[] = []): Record<string, string> {
    return { ...sandboxEnv(), ...envRecord(this.layout.env), ...envRecord(extra) };
  }

  /** Starts the agent's bash in `cwd` when it still exists (else the WORKDIR). */
  async startShell(cwd = this.cwd): Promise<void> {
    const rel = posix.relative(this.workdir, cwd);
    const inside = !rel.startsWith("..") && existsSync(join(this.layout.work, rel));
    const start = inside ? cwd : this.workdir;
    const { argv, fd3 } = bwrapInvocation(this.agentSpec(["bash", "--noprofile", "--norc"], start));
    const { child, shell } = startBwrapShell(argv, fd3, this.processEnv());
    this.child = child;
    this.shell = shell;
    this.cwd = start;
    await shell.run("true");
  }

  private kill(): void {
    if (this.child) killGroup(this.child);
    this.child = undefined;
    this.shell = undefined;
  }

  async exec(command: string, timeoutMs: number): Promise<CommandResult> {
    if (!this.shell) await this.startShell();
    // Killing bwrap ends its PID namespace: every process the command started dies with it.
    const restart = async (): Promise<string> => {
      this.kill();
      await this.startShell();
      return this.cwd;
    };
    const result = await execWithTimeout(this.shell as SentinelShell, command, timeoutMs, this.cwd, {
      restart,
      killAndRestart: restart,
    });
    this.cwd = result.cwd || this.cwd;
    return { output: result.output, exitCode: result.exitCode, timedOut: result.timedOut };
  }

  async runSolution(timeoutMs: number): Promise<CommandResult> {
    if (!this.task.solution)
      return { output: "this task has no solution/solve.sh", exitCode: 1, timedOut: false };
    const env = envList(resolveEnvVars(this.task.config.solution.env));
    const spec = this.agentSpec(["bash", `${HARBOR_PATHS.solution}/solve.sh`], this.workdir, [
      { src: join(this.task.dir, "solution"), dest: HARBOR_PATHS.solution, readOnly: true },
    ]);
    const { argv, fd3 } = bwrapInvocation(spec);
    const out = await runProcess(argv, { cwd: "/", timeoutMs, env: this.processEnv(env), fd3 });
    return { output: out.stdout + out.stderr, exitCode: out.exitCode, timedOut: out.timedOut };
  }

  async verify(): Promise<VerifierRun> {
    const started = Date.now();
    const l = this.layout;
    const dir = await mkdtemp(join(l.dir, `verify-${this.verifications++}-`));
    const copy = join(dir, "work");
    const logs = join(dir, "logs");
    const uid = this.host.takeUid();
    try {
      // A copy of the final state (links copied as links, never followed), given to the verifier's own uid.
      const cp = await runProcess(["cp", "-a", "--reflink=auto", "-T", l.work, copy], {
        cwd: "/",
        timeoutMs: 300_000,
      });
      if (cp.exitCode !== 0)
        throw new Error(`copying the final state for the verifier failed: ${cp.stderr.trim()}`);
      await mkdir(logs, { recursive: true });
      if (this.host.asRoot) {
        await chownTree(copy, uid);
        await chownTree(logs, uid);
      }
      const v = this.task.config.verifier;
      const spec = this.host.spec({
        workspace: join(l.dir, "empty"),
        roPaths: l.roPaths,
        passwd: l.passwd,
        identity: this.host.asRoot ? { kind: "setpriv", uid } : { kind: "userns" },
        memoryMb: this.task.config.environment.memory_mb,
        binds: [
          { src: copy, dest: l.workdir, readOnly: false },
          { src: join(this.task.dir, "tests"), dest: HARBOR_PATHS.tests, readOnly: true },
          { src: logs, dest: HARBOR_PATHS.verifierLogs, readOnly: false },
        ],
        cwd: l.workdir,
        command: [
          "bash",
          "-c",
          `t=${HARBOR_PATHS.tests}/test.sh; { if [ -x "$t" ]; then "$t"; else bash "$t"; fi; } > ${shellQuote(HARBOR_PATHS.testStdout)} 2>&1`,
        ],
      });
      const { argv, fd3 } = bwrapInvocation(spec);
      const env = this.processEnv(envList(resolveEnvVars(v.env)));
      const run = await runProcess(argv, { cwd: "/", timeoutMs: v.timeout_sec * 1000, env, fd3 });
      if (run.timedOut) return { output: "", exitCode: 137, timedOut: true, ms: Date.now() - started };
      const output = (await readIfThere(join(logs, "test-stdout.txt"))) ?? run.stderr;
      return {
        rewardText: await readIfThere(join(logs, "reward.txt")),
        rewardJson: await readIfThere(join(logs, "reward.json")),
        output: output.slice(-20_000),
        exitCode: run.exitCode,
        timedOut: false,
        ms: Date.now() - started,
      };
    } finally {
      this.host.giveUid(uid);
      await removeTree(dir);
    }
  }

  async writtenBytes(): Promise<number | undefined> {
    const out = await runProcess(["du", "-sb", this.layout.work], { cwd: "/", timeoutMs: 60_000 });
    const bytes = Number(out.stdout.split(/\s/)[0]);
    return Number.isFinite(bytes) ? bytes : undefined;
  }

  async close(): Promise<void> {
    this.kill();
    await removeTree(this.layout.dir);
  }
}
