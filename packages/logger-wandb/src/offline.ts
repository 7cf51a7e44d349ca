import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Logger } from "@air/core";
import { encodeRecord, FILE_HEADER, frameRecords, type RecordItem, type WandbRecord } from "./records.ts";
import type { RunInfo, RunSink } from "./sink.ts";

const items = (values: Record<string, unknown>): RecordItem[] =>
  Object.entries(values).map(([key, value]) => ({ key, valueJson: JSON.stringify(value) }));

/** `YYYYMMDD_HHMMSS` (UTC) of a time, as in W&B's `offline-run-<time>-<id>` directory names. */
export function runDirTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10).replaceAll("-", "")}_${iso.slice(11, 19).replaceAll(":", "")}`;
}

/**
 * The offline sink: writes the run as the W&B SDK does without network, into
 * `<dir>/offline-run-<YYYYMMDD_HHMMSS>-<id>/`: the transaction log `run-<id>.wandb` (header, run, config,
 * one history record per row, files, summary, exit, final, footer) and the run's files under `files/`
 * (tables, `wandb-summary.json`). `wandb sync <that directory>` uploads it later.
 * @example const sink = new OfflineSink(join(runDir, "wandb"), info, log);
 */
export class OfflineSink implements RunSink {
  readonly location: string;
  private readonly logFile: string;
  private offset = 0;
  private num = 0;
  private failed = false;

  constructor(
    dir: string,
    private readonly info: RunInfo,
    private readonly log: Logger,
  ) {
    this.location = join(dir, `offline-run-${runDirTime(info.startTimeMs)}-${info.runId}`);
    this.logFile = join(this.location, `run-${info.runId}.wandb`);
  }

  private write(...records: WandbRecord[]): void {
    if (this.failed) return;
    try {
      const bytes = frameRecords(
        records.map((r) => encodeRecord(r, ++this.num)),
        this.offset,
      );
      appendFileSync(this.logFile, bytes);
      this.offset += bytes.length;
    } catch (error) {
      this.failed = true;
      this.log.error(`W&B offline: cannot write ${this.logFile}: ${(error as Error).message}`);
    }
  }

  async start(): Promise<void> {
    mkdirSync(join(this.location, "files"), { recursive: true });
    writeFileSync(this.logFile, FILE_HEADER, { flag: "wx" });
    this.offset = FILE_HEADER.length;
    const { runId, entity, project, displayName, tags, startTimeMs } = this.info;
    this.write(
      { type: "header", producer: "air" },
      { type: "run", runId, entity, project, displayName, tags, config: [], startTimeMs },
    );
  }

  config(config: Record<string, unknown>): void {
    this.write({ type: "config", update: items(config) });
  }

  history(row: Record<string, unknown>, step: number): void {
    this.write({ type: "history", step, items: items(row) });
  }

  private latestSummary: Record<string, unknown> = {};

  summary(summary: Record<string, unknown>): void {
    this.latestSummary = summary;
  }

  file(path: string, content: string): void {
    try {
      const target = join(this.location, "files", path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
      this.write({ type: "files", paths: [path] });
    } catch (error) {
      this.log.error(`W&B offline: cannot write ${path}: ${(error as Error).message}`);
    }
  }

  async finish(exitCode: number): Promise<void> {
    writeFileSync(join(this.location, "files", "wandb-summary.json"), JSON.stringify(this.latestSummary));
    this.write(
      { type: "summary", update: items(this.latestSummary) },
      { type: "exit", exitCode, runtimeSeconds: (Date.now() - this.info.startTimeMs) / 1000 },
      { type: "final" },
      { type: "footer" },
    );
  }
}
