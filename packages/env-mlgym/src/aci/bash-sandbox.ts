import { type ChildProcess, spawn } from "node:child_process";
import type { EvaluationOutput, ExecResult, Sandbox } from "@air/sandbox";
import { SentinelShell } from "@air/sandbox";
import { ACI_GUARDS } from "./guards.ts";

/**
 * A bare sandbox for tests and the parity kit: a persistent bash (the runtimes' sentinel protocol and agent
 * command guards) in a host directory, with no isolation and no evaluation. Never give it to a policy.
 * @example const sandbox = await BashSandbox.start("/tmp/ws"); await sandbox.exec("ls", 5000); await sandbox.close();
 */
export class BashSandbox implements Sandbox {
  readonly id: string;
  private cwd: string;

  private constructor(
    readonly workspace: string,
    private readonly child: ChildProcess,
    private readonly shell: SentinelShell,
  ) {
    this.id = `bash-${child.pid}`;
    this.cwd = workspace;
  }

  /**
   * Starts bash in `workspace` with a small fixed environment (PATH, HOME, LANG=C.UTF-8); with `uid` (needs
   * root), as that user and group through setpriv.
   */
  static async start(workspace: string, home = workspace, uid?: number): Promise<BashSandbox> {
    const bash = ["bash", "--noprofile", "--norc"];
    const argv =
      uid === undefined ? bash : ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...bash];
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd: workspace,
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const shell = new SentinelShell((text) => child.stdin?.write(text));
    child.stdout?.on("data", (chunk: Buffer) => shell.feed(chunk));
    child.stderr?.on("data", (chunk: Buffer) => shell.feed(chunk));
    child.stdin?.on("error", () => {});
    child.on("exit", () => shell.fail(new Error("the sandbox shell exited")));
    child.stdin?.write(`${SentinelShell.PRELUDE}${ACI_GUARDS}\n`);
    await shell.run("true");
    return new BashSandbox(workspace, child, shell);
  }

  async exec(command: string, timeoutMs: number): Promise<ExecResult> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    try {
      const result = await Promise.race([this.shell.run(command), timeout]);
      if (result === "timeout") {
        this.child.kill("SIGKILL");
        return { output: "", exitCode: 124, cwd: this.cwd, timedOut: true };
      }
      this.cwd = result.cwd || this.cwd;
      return { ...result, timedOut: false };
    } finally {
      clearTimeout(timer);
    }
  }

  async evaluate(): Promise<EvaluationOutput> {
    return { stdout: "", stderr: "BashSandbox does not evaluate", exitCode: 1, timedOut: false };
  }

  async snapshot(): Promise<Uint8Array> {
    throw new Error("BashSandbox has no snapshots");
  }

  async alive(): Promise<boolean> {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Ends the shell. */
  async close(): Promise<void> {
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }
}
