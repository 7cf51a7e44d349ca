import { randomBytes } from "node:crypto";

/** One command's result from a {@link SentinelShell}. */
export interface ShellResult {
  output: string;
  exitCode: number;
  cwd: string;
}

/**
 * Drives a persistent bash over a byte stream: each command is read verbatim into a variable (a heredoc with
 * a random terminator) and eval'ed, then followed by a marker carrying the nonce, the exit code and `$PWD`,
 * so output ends exactly where the marker starts. stdin of the command is /dev/null; stderr is merged into
 * stdout by the shell's startup line.
 * @example
 * const shell = new SentinelShell((text) => proc.stdin.write(text));
 * proc.stdout.on("data", (chunk) => shell.feed(chunk));
 * const { output } = await shell.run("ls");
 */
export class SentinelShell {
  private readonly nonce = randomBytes(8).toString("hex");
  private buffer = "";
  private readonly decoder = new TextDecoder();
  private waiting: { resolve: (r: ShellResult) => void; reject: (e: Error) => void } | undefined;
  private closedWith: Error | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Start of a command's output that ran past `maxBufferChars`; the middle was dropped. */
  private head: string | undefined;
  private dropped = 0;

  /** `maxBufferChars`: a command's output beyond this keeps its first and last quarter only. */
  constructor(
    private readonly write: (text: string) => void,
    private readonly maxBufferChars = 4_000_000,
  ) {}

  /** Text that makes a fresh bash merge stderr into stdout; send it once, first. */
  static readonly PRELUDE = "exec 2>&1\nunset HISTFILE\n";

  /** Feeds bytes read from the shell's stdout. */
  feed(chunk: Uint8Array | string): void {
    this.buffer += typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    this.drain();
  }

  /** The shell ended; the waiting command (if any) and later ones fail with `error`. */
  fail(error: Error): void {
    this.closedWith = error;
    this.waiting?.reject(error);
    this.waiting = undefined;
  }

  /** Runs `command`; resolves when its marker arrives. Commands run one at a time, in call order. */
  run(command: string): Promise<ShellResult> {
    const next = this.queue.then(() => this.runNow(command));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private runNow(command: string): Promise<ShellResult> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise<ShellResult>((resolve, reject) => {
      this.waiting = { resolve, reject };
      const end = `AIRCMD_${this.nonce}`;
      // The command is read verbatim into a variable and eval'ed: an unclosed quote or heredoc then fails
      // (or ends) inside eval instead of swallowing the marker line and hanging until the timeout.
      this.write(
        `IFS= read -r -d '' __air_cmd <<'${end}'\n${command}\n${end}\n` +
          `{ eval "$__air_cmd"\n} </dev/null\n__air_rc=$?; printf '\\036AIR${this.nonce} %d %s\\n' "$__air_rc" "$PWD"\n`,
      );
      this.drain();
    });
  }

  /** Past `limit` characters, keeps the first quarter (once) in `head` and the last quarter of `text`. */
  private cap(text: string, limit: number): string {
    const quarter = Math.floor(this.maxBufferChars / 4);
    if (text.length <= Math.max(limit, quarter)) return text;
    let rest = text;
    if (this.head === undefined) {
      this.head = rest.slice(0, quarter);
      rest = rest.slice(quarter);
    }
    const cut = Math.max(0, rest.length - quarter);
    this.dropped += cut;
    return rest.slice(cut);
  }

  private drain(): void {
    if (!this.waiting) return;
    const marker = `\u001eAIR${this.nonce} `;
    const at = this.buffer.indexOf(marker);
    const end = at < 0 ? -1 : this.buffer.indexOf("\n", at);
    if (end < 0) {
      this.buffer = this.cap(this.buffer, this.maxBufferChars);
      return;
    }
    const [code, ...cwdParts] = this.buffer.slice(at + marker.length, end).split(" ");
    const body = this.cap(this.buffer.slice(0, at), this.head === undefined ? this.maxBufferChars : 0);
    const output =
      this.head === undefined ? body : `${this.head}\n[... ${this.dropped} characters dropped ...]\n${body}`;
    this.head = undefined;
    this.dropped = 0;
    const result = { output, exitCode: Number(code), cwd: cwdParts.join(" ") };
    this.buffer = this.buffer.slice(end + 1);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting.resolve(result);
  }
}

/** Told to the agent when its shell exited (e.g. `exit 1`) and a new one replaced it. */
export const SHELL_RESTARTED = "The shell exited; a new shell was started in";

/** Quotes `value` for bash as one word. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** How a sandbox gets its agent shell back after a command ended it or ran past its timeout. */
export interface ShellRecovery {
  /** The shell ended by itself (`exit`, killed): start a new one; resolves to the new shell's cwd. */
  restart(): Promise<string>;
  /** The command ran past its timeout: kill everything it started, start a new shell; resolves to its cwd. */
  killAndRestart(): Promise<string>;
}

/**
 * Runs `command` in the agent's persistent `shell` with a timeout, the one recovery every runtime shares: a
 * shell that ended is replaced (the agent is told, exit code 1); a command past `timeoutMs` is killed with
 * everything it started and the shell replaced (exit code 137, `timedOut`); otherwise the command's result.
 * `cwd` is the shell's directory before the command (kept when the marker carries none).
 * @example return execWithTimeout(shell, "ls", 10_000, this.cwd, { restart, killAndRestart });
 */
export async function execWithTimeout(
  shell: SentinelShell,
  command: string,
  timeoutMs: number,
  cwd: string,
  recovery: ShellRecovery,
): Promise<ShellResult & { timedOut: boolean }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    const result = await Promise.race([
      shell.run(command).catch((error: Error) => ({ ended: error })),
      timeout,
    ]);
    if (typeof result === "object" && "ended" in result) {
      const now = await recovery.restart();
      return { output: `${SHELL_RESTARTED} ${now}.`, exitCode: 1, cwd: now, timedOut: false };
    }
    if (result === "timeout") {
      const now = await recovery.killAndRestart();
      return { output: "", exitCode: 137, cwd: now, timedOut: true };
    }
    return { ...result, cwd: result.cwd || cwd, timedOut: false };
  } finally {
    clearTimeout(timer);
  }
}
