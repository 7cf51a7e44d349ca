import type { Database } from "bun:sqlite";

export interface BatchWriterOptions {
  /** Flush once this many operations are queued. */
  flushRows: number;
  /** Flush at most this long after the first queued operation. */
  flushMs: number;
  /** Called when a flush fails; the failed batch is dropped. */
  onError?: (error: unknown) => void;
}

/**
 * Queues write operations and runs them in one transaction per flush, so event handlers only push closures
 * and SQLite sees few, large transactions.
 * @example
 * const writer = new BatchWriter(db.$client, { flushRows: 500, flushMs: 250 });
 * writer.push(() => db.insert(metrics).values(row).run());
 * writer.flush();
 */
export class BatchWriter {
  private queue: Array<() => void> = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private soon: ReturnType<typeof setImmediate> | undefined;
  /** Operations written so far. */
  written = 0;
  flushes = 0;
  /** Milliseconds spent committing (SQLite writing the WAL), after the operations of each flush ran. */
  commitMs = 0;
  /** Operations pushed after `close()`, which are dropped. */
  dropped = 0;
  private closed = false;

  constructor(
    private readonly client: Database,
    private readonly options: BatchWriterOptions,
  ) {}

  get queued(): number {
    return this.queue.length;
  }

  push(op: () => void): void {
    if (this.closed) {
      this.dropped++;
      return;
    }
    this.queue.push(op);
    if (this.queue.length >= this.options.flushRows) this.flush();
    else if (!this.timer) this.timer = setTimeout(() => this.flush(), this.options.flushMs);
  }

  /**
   * Flushes once the operations queued in this turn of the event loop are in (one transaction for all of them),
   * instead of up to `flushMs` later: for rows another process must find after a kill -9 (a turn's resume point,
   * whose env prunes the snapshot of the turn before).
   */
  flushSoon(): void {
    if (this.closed || this.soon) return;
    this.soon = setImmediate(() => {
      this.soon = undefined;
      this.flush();
    });
  }

  /** Flushes, then drops whatever is pushed later (events that arrive after the database closed). */
  close(): void {
    if (this.soon) clearImmediate(this.soon);
    this.soon = undefined;
    this.flush();
    this.closed = true;
  }

  /** Passes an error of a write made outside the queue to `onError`. */
  reportError(error: unknown): void {
    this.options.onError?.(error);
  }

  /** Runs every queued operation now, in one transaction. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length === 0) return;
    const ops = this.queue;
    this.queue = [];
    try {
      let ran = 0;
      this.client.transaction(() => {
        for (const op of ops) op();
        ran = performance.now();
      })();
      this.commitMs += performance.now() - ran;
      this.written += ops.length;
      this.flushes++;
    } catch (error) {
      this.options.onError?.(error);
    }
  }
}
