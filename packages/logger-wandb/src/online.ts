import type { Logger } from "@air/core";
import { type RunPath, type WandbClient, WandbHttpError } from "./client.ts";
import type { RunInfo, RunSink } from "./sink.ts";

export interface OnlineOptions {
  /** Send queued rows at most this often. */
  flushMs: number;
  /** Bound on finishing (the last rows, files and the `complete` request). */
  finishTimeoutMs: number;
  log: Logger;
}

/** A run's config as W&B stores it: each top-level key's value under `value`. */
export function configValues(config: Record<string, unknown>): Record<string, { value: unknown }> {
  return Object.fromEntries(Object.entries(config).map(([k, v]) => [k, { value: v }]));
}

/**
 * The online sink: registers the run with `UpsertBucket` at start, streams history rows and the summary to the
 * run's file stream (`wandb-history.jsonl` lines with running offsets, `wandb-summary.json` at offset 0), uploads
 * files through `RunUploadUrls` and lists them under `uploaded`, and ends with `{complete: true, exitcode}`. One
 * request is in flight at a time so offsets arrive in order; a failed send keeps its lines for the next one.
 * @example const sink = new OnlineSink(client, info, { flushMs: 2000, finishTimeoutMs: 30000, log });
 */
export class OnlineSink implements RunSink {
  private path: RunPath;
  private pendingLines: string[] = [];
  private historyOffset = 0;
  private pendingSummary: string | undefined;
  private pendingFiles: Array<{ path: string; content: string }> = [];
  private pendingConfig: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sending: Promise<void> = Promise.resolve();
  private dropped = false;
  private filesRejected = false;
  private finished = false;

  constructor(
    private readonly client: WandbClient,
    private readonly info: RunInfo,
    private readonly options: OnlineOptions,
  ) {
    this.path = { entity: info.entity, project: info.project, runId: info.runId };
  }

  get location(): string {
    const app = this.client.options.baseUrl.replace("//api.", "//");
    return `${app}/${this.path.entity}/${this.path.project}/runs/${this.path.runId}`;
  }

  async start(): Promise<void> {
    const entity = this.info.entity || (await this.client.viewerEntity());
    const stored = await this.client.upsertRun({
      name: this.info.runId,
      project: this.info.project,
      entity,
      displayName: this.info.displayName,
      tags: this.info.tags,
    });
    this.path = { entity: stored.entity, project: stored.project, runId: this.info.runId };
    // A resumed run appends its history after what W&B holds (the SDK's resume reads the same count).
    if (this.info.resume) this.historyOffset = await this.client.historyLineCount(this.path);
  }

  config(config: Record<string, unknown>): void {
    this.pendingConfig = JSON.stringify(configValues(config));
    this.schedule();
  }

  history(row: Record<string, unknown>, _step: number): void {
    this.pendingLines.push(JSON.stringify(row));
    this.schedule();
  }

  summary(summary: Record<string, unknown>): void {
    this.pendingSummary = JSON.stringify(summary);
    this.schedule();
  }

  file(path: string, content: string): void {
    this.pendingFiles.push({ path, content });
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.dropped || this.finished) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sending = this.sending.then(() => this.send());
    }, this.options.flushMs);
  }

  /** Sends everything queued: config (UpsertBucket), files, then one file-stream request. */
  private async send(): Promise<void> {
    if (this.dropped) return;
    try {
      if (this.pendingConfig !== undefined) {
        const config = this.pendingConfig;
        await this.client.upsertRun({
          name: this.path.runId,
          project: this.path.project,
          entity: this.path.entity,
          config,
        });
        if (this.pendingConfig === config) this.pendingConfig = undefined;
      }
      const files = await this.uploadPending();
      // A copy: rows logged while this request is in flight join `pendingLines` for the next send.
      const lines = this.pendingLines.slice();
      const summary = this.pendingSummary;
      const body: Record<string, unknown> = { files: {} as Record<string, unknown> };
      const bodyFiles = body.files as Record<string, unknown>;
      if (lines.length) bodyFiles["wandb-history.jsonl"] = { offset: this.historyOffset, content: lines };
      if (summary !== undefined) bodyFiles["wandb-summary.json"] = { offset: 0, content: [summary] };
      if (files.length) body.uploaded = files.map((f) => f.path);
      if (!lines.length && summary === undefined && !files.length) return;
      await this.client.fileStream(this.path, body);
      this.pendingLines = this.pendingLines.slice(lines.length);
      this.historyOffset += lines.length;
      if (this.pendingSummary === summary) this.pendingSummary = undefined;
    } catch (error) {
      const permanent = error instanceof WandbHttpError && error.status !== undefined;
      this.options.log.error(`W&B: ${(error as Error).message}${permanent ? "; no more data is sent" : ""}`);
      if (permanent) this.dropped = true;
      else this.schedule();
    }
  }

  /**
   * Uploads the queued files; returns the ones uploaded. A failed upload does not hold the metrics back: a
   * transient failure keeps the files for the next send, a 4xx drops them (logged) and uploads no more files.
   */
  private async uploadPending(): Promise<Array<{ path: string; content: string }>> {
    const files = this.pendingFiles;
    this.pendingFiles = [];
    if (files.length === 0 || this.filesRejected) return [];
    try {
      await this.client.uploadFiles(this.path, files);
      return files;
    } catch (error) {
      const permanent = error instanceof WandbHttpError && error.status !== undefined;
      this.options.log.error(
        `W&B: uploading ${files.length} file(s) failed: ${(error as Error).message}${permanent ? "; no more files are uploaded" : ""}`,
      );
      if (permanent) this.filesRejected = true;
      else this.pendingFiles.unshift(...files);
      return [];
    }
  }

  async finish(exitCode: number): Promise<void> {
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const work = this.sending
      .then(() => this.send())
      .then(async () => {
        if (this.dropped) return;
        await this.client.fileStream(this.path, { complete: true, exitcode: exitCode });
      });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.options.finishTimeoutMs);
    });
    try {
      const outcome = await Promise.race([work, timeout]);
      if (outcome === "timeout") {
        this.options.log.error(
          `W&B: finishing the run took over ${this.options.finishTimeoutMs} ms; ${this.pendingLines.length} row(s) not sent`,
        );
      }
    } catch (error) {
      this.options.log.error(`W&B: could not finish the run: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }
}
