import type { EventHandlers, Trajectory } from "@air/core";
import { derivedMetrics, wandbMetrics } from "./metrics.ts";
import type { RunSink } from "./sink.ts";
import { rolloutsTable, tableFile } from "./table.ts";

export interface RecorderOptions {
  /** Rows of the rollouts table logged each step (0: no table). */
  tableRows: number;
  now?: () => number;
  startTimeMs: number;
}

type Row = Record<string, unknown>;

const SECRET_KEY = /(^|_)(api_?key|password|secret|token)$/i;

/**
 * A copy of a config with the string values of secret-looking keys (`api_key`, `…_token`, `password`, `secret`)
 * replaced by "<redacted>", so credentials in plugin sections never leave the machine.
 * @example redactSecrets({ policy: { api_key: "sk-…", max_tokens: 9 } }) // { policy: { api_key: "<redacted>", max_tokens: 9 } }
 */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      SECRET_KEY.test(k) && typeof v === "string" ? "<redacted>" : redactSecrets(v),
    ]),
  );
}

/**
 * Turns a run's events into W&B history rows, one per air step: `step:end` metrics (renamed as prime-rl names
 * them), the trainer's metrics of that step (`weights:updated`), evaluation results (`eval:end`), a rollouts
 * table, and `step`. A row is committed when a later step starts or the run ends; `run:start` sends the
 * resolved config. The summary is the latest value of every key.
 * @example const recorder = new WandbRecorder(sink, { tableRows: 4, startTimeMs: Date.now() });
 */
export class WandbRecorder {
  private open: { step: number; values: Row } | undefined;
  private readonly summary: Row = {};
  private totalRollouts = 0;
  private status: "completed" | "failed" | "aborted" | undefined;
  readonly hooks: Partial<EventHandlers>;

  constructor(
    private readonly sink: RunSink,
    private readonly options: RecorderOptions,
  ) {
    this.hooks = {
      "run:start": (e) => sink.config(redactSecrets(e.config) as Record<string, unknown>),
      "step:end": (e) => {
        this.totalRollouts += e.metrics["rollout/count"] ?? e.trajectories.length;
        const values: Row = {
          ...wandbMetrics(e.metrics),
          ...derivedMetrics(e.metrics, { rollouts: this.totalRollouts }),
        };
        this.merge(e.step, values);
        if (options.tableRows > 0) {
          this.table(
            "rollouts",
            e.step,
            e.trajectories,
            rolloutsTable(e.step, e.trajectories, e.batch, options.tableRows),
          );
        }
      },
      "weights:updated": (e) => {
        const step = this.open?.step ?? Math.max(0, e.weights.version - 1);
        this.merge(step, wandbMetrics(e.metrics));
      },
      "eval:end": (e) => {
        this.merge(e.step, wandbMetrics(e.metrics));
        if (options.tableRows > 0) {
          const batch = { schemaVersion: 1, step: e.step, samples: [], metrics: {} };
          this.table(
            "eval/rollouts",
            e.step,
            e.trajectories,
            rolloutsTable(e.step, e.trajectories, batch, options.tableRows),
          );
        }
      },
      "run:end": (e) => {
        this.status = e.status;
        this.commit();
      },
    };
  }

  private table(
    key: string,
    step: number,
    trajectories: Trajectory[],
    table: ReturnType<typeof rolloutsTable>,
  ) {
    if (trajectories.length === 0) return;
    const file = tableFile(key, step, table);
    this.sink.file(file.path, file.content);
    this.merge(step, { [key]: file.value });
  }

  private merge(step: number, values: Row): void {
    if (this.open && step > this.open.step) this.commit();
    if (!this.open) this.open = { step, values: { step } };
    Object.assign(this.open.values, values);
  }

  /** Sends the open row (if any) with `_step`, `_runtime` and `_timestamp`, and the summary. */
  commit(): void {
    if (!this.open) return;
    const now = (this.options.now ?? Date.now)();
    const row: Row = {
      ...this.open.values,
      _step: this.open.step,
      _runtime: (now - this.options.startTimeMs) / 1000,
      _timestamp: now / 1000,
    };
    this.sink.history(row, this.open.step);
    Object.assign(this.summary, row);
    this.sink.summary({ ...this.summary });
    this.open = undefined;
  }

  /** Commits what is open and finishes the run: exit code 0 when it completed, 1 otherwise. */
  async finish(): Promise<void> {
    this.commit();
    await this.sink.finish(this.status === "completed" ? 0 : 1);
  }
}
