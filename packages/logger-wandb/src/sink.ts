/** What identifies a run to its sink. */
export interface RunInfo {
  runId: string;
  entity: string;
  project: string;
  displayName: string;
  tags: string[];
  startTimeMs: number;
  /** Continue this run (`rl --resume`): history goes after the lines W&B already holds. */
  resume?: boolean;
}

/**
 * Where a W&B run goes: the W&B server (online) or a local transaction log (offline). Calls other than
 * `start` and `finish` must not block the run: they queue work.
 */
export interface RunSink {
  /** Registers the run; errors here stop the run at its start (a wrong key, project or entity). */
  start(): Promise<void>;
  /** The resolved config, as `{key: value}` of the run's top-level sections. */
  config(config: Record<string, unknown>): void;
  /** One committed history row (the `_step`, `_runtime` and `_timestamp` keys included). */
  history(row: Record<string, unknown>, step: number): void;
  /** The run's summary so far (latest value of each key). */
  summary(summary: Record<string, unknown>): void;
  /** A file of the run (e.g. a table), path relative to the run's files directory. */
  file(path: string, content: string): void;
  /** Sends what is queued and marks the run finished; bounded by the sink's own timeout. */
  finish(exitCode: number): Promise<void>;
  /** Where the run can be found (a URL or a directory), for the log. */
  readonly location: string;
}
