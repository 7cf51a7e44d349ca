import { onAbort } from "./abort-fanout.ts";
import { AirError } from "./errors.ts";

/**
 * Tracks awaited work so shutdown can name what never settled, and puts a timeout on each await.
 * @example const out = await pending.run("env.open titanic", 30_000, () => env.open(ex), { plugin: "mlgym", hook: "open" });
 */
export class PendingWork {
  private nextId = 0;
  private readonly open = new Map<number, { label: string; sinceMs: number }>();

  /**
   * Runs `work` with a timeout. With `where.signal`, an abort stops the wait at once (ABORTED): the caller moves
   * on (e.g. closes the sandbox that a long command runs in) instead of waiting for work nobody needs any more.
   */
  async run<T>(
    label: string,
    timeoutMs: number,
    work: () => Promise<T> | T,
    where: { plugin?: string; hook?: string; signal?: AbortSignal } = {},
  ): Promise<T> {
    const id = this.nextId++;
    this.open.set(id, { label, sinceMs: Date.now() });
    let timer: ReturnType<typeof setTimeout> | undefined;
    let off: (() => void) | undefined;
    const signal = where.signal;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new AirError("TIMEOUT", `${label}: no result after ${timeoutMs} ms`, placeOf(where))),
          timeoutMs,
        );
        if (!signal) return;
        const aborted = () => reject(new AirError("ABORTED", `${label}: aborted`, placeOf(where)));
        if (signal.aborted) aborted();
        else off = onAbort(signal, aborted);
      });
      const running = Promise.resolve().then(work);
      running.catch(() => {});
      return await Promise.race([running, timeout]);
    } finally {
      clearTimeout(timer);
      off?.();
      this.open.delete(id);
    }
  }

  /** Labels of work still running, with how long it has been running. */
  unsettled(): string[] {
    const now = Date.now();
    return [...this.open.values()].map((w) => `${w.label} (running ${now - w.sinceMs} ms)`);
  }
}

/** The plugin and hook of a `run` call, for its error (without its signal). */
function placeOf(where: { plugin?: string; hook?: string }): { plugin?: string; hook?: string } {
  const at: { plugin?: string; hook?: string } = {};
  if (where.plugin !== undefined) at.plugin = where.plugin;
  if (where.hook !== undefined) at.hook = where.hook;
  return at;
}

/** Resolves after `ms`, or rejects when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AirError("ABORTED", "aborted"));
    let off: (() => void) | undefined;
    const timer = setTimeout(() => {
      off?.();
      resolve();
    }, ms);
    if (signal)
      off = onAbort(signal, () => {
        clearTimeout(timer);
        reject(new AirError("ABORTED", "aborted"));
      });
  });
}

/** A counting semaphore; `inUse` and `peak` let tests and the progress view see concurrency. */
export class Semaphore {
  private active = 0;
  private maxSeen = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {
    if (limit < 1) throw new RangeError("semaphore limit must be >= 1");
  }

  get inUse(): number {
    return this.active;
  }

  get peak(): number {
    return this.maxSeen;
  }

  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiters.push(resolve));
    else this.active++;
    this.maxSeen = Math.max(this.maxSeen, this.active);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.active--;
    };
  }
}
