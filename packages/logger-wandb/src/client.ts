import { sleep } from "@air/core";
import {
  RUN_RESUME_STATUS,
  RUN_UPLOAD_URLS,
  type RunResumeStatusResult,
  type RunUploadUrlsResult,
  UPSERT_BUCKET,
  type UpsertBucketResult,
  type UpsertBucketVariables,
  VIEWER,
  type ViewerResult,
} from "./graphql.ts";

/** An HTTP answer W&B gave that is not worth retrying (4xx) or a request that kept failing. */
export class WandbHttpError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "WandbHttpError";
  }
}

export interface WandbClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Bound on each request. */
  timeoutMs: number;
  /** Tries per request on network errors and 5xx/429 answers (1: no retry). */
  attempts: number;
  /** First wait between tries; doubles each time. */
  retryDelayMs: number;
  userAgent?: string;
  signal?: AbortSignal;
}

/** One run's path on W&B. */
export interface RunPath {
  entity: string;
  project: string;
  runId: string;
}

/**
 * W&B's HTTP API as its SDKs speak it: GraphQL at `/graphql`, the run's file stream at
 * `/files/<entity>/<project>/<run id>/file_stream`, file uploads by PUT to the URLs `RunUploadUrls` returns.
 * @example
 * const client = new WandbClient({ baseUrl: "https://api.wandb.ai", apiKey, timeoutMs: 30000, attempts: 5, retryDelayMs: 1000 });
 * const entity = await client.viewerEntity();
 */
export class WandbClient {
  constructor(readonly options: WandbClientOptions) {}

  private headers(json: boolean): Record<string, string> {
    return {
      Authorization: `Basic ${Buffer.from(`api:${this.options.apiKey}`).toString("base64")}`,
      "User-Agent": this.options.userAgent ?? "air-logger-wandb",
      ...(json ? { "Content-Type": "application/json" } : {}),
    };
  }

  /** Sends a request, retrying network errors, 429 and 5xx answers with a doubling delay. */
  async request(url: string, init: { method: string; body: string; headers: Record<string, string> }) {
    const { attempts, retryDelayMs, timeoutMs } = this.options;
    let delay = retryDelayMs;
    let last = "";
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const signals = [AbortSignal.timeout(timeoutMs), ...(this.options.signal ? [this.options.signal] : [])];
      try {
        const res = await fetch(url, { ...init, signal: AbortSignal.any(signals) });
        if (res.ok) return res;
        const text = (await res.text()).slice(0, 300);
        last = `HTTP ${res.status} from ${url}${text ? `: ${text}` : ""}`;
        if (res.status !== 429 && res.status < 500) throw new WandbHttpError(last, res.status);
      } catch (error) {
        if (error instanceof WandbHttpError) throw error;
        if (this.options.signal?.aborted) throw new WandbHttpError(`request to ${url} aborted`);
        last = `${url}: ${(error as Error).message}`;
      }
      if (attempt < attempts) {
        await sleep(delay);
        delay *= 2;
      }
    }
    throw new WandbHttpError(`${last} (after ${attempts} tries)`);
  }

  /** Runs a GraphQL operation; a `errors` array in the answer is an error. */
  async graphql<T>(query: string, operationName: string, variables: object): Promise<T> {
    const res = await this.request(`${this.options.baseUrl}/graphql`, {
      method: "POST",
      headers: this.headers(true),
      body: JSON.stringify({ query, variables, operationName }),
    });
    const body = (await res.json()) as { data?: T; errors?: Array<{ message?: string }> };
    if (body.errors?.length) {
      throw new WandbHttpError(
        `${operationName}: ${body.errors.map((e) => e.message ?? "error").join("; ")}`,
      );
    }
    if (!body.data) throw new WandbHttpError(`${operationName}: answer has no data`);
    return body.data;
  }

  /** The entity (user or team) the API key logs to by default (`Viewer`). */
  async viewerEntity(): Promise<string> {
    const data = await this.graphql<ViewerResult>(VIEWER, "Viewer", {});
    const entity = data.viewer?.entity;
    if (!entity) throw new WandbHttpError("Viewer: the API key has no default entity; set `entity`");
    return entity;
  }

  /** Creates or updates a run (`UpsertBucket`); returns its entity and project as W&B stored them. */
  async upsertRun(variables: UpsertBucketVariables): Promise<{ entity: string; project: string }> {
    const data = await this.graphql<UpsertBucketResult>(UPSERT_BUCKET, "UpsertBucket", variables);
    const project = data.upsertBucket?.bucket?.project;
    return { entity: project?.entity?.name ?? variables.entity, project: project?.name ?? variables.project };
  }

  /** The history lines W&B holds for a run (`RunResumeStatus`); 0 when the run does not exist. */
  async historyLineCount(run: RunPath): Promise<number> {
    const data = await this.graphql<RunResumeStatusResult>(RUN_RESUME_STATUS, "RunResumeStatus", {
      project: run.project,
      entity: run.entity,
      name: run.runId,
    });
    return data.model?.bucket?.historyLineCount ?? 0;
  }

  /** Posts one file-stream request (`{files, uploaded, complete, exitcode}`). */
  async fileStream(run: RunPath, body: object): Promise<void> {
    const path = [run.entity, run.project, run.runId].map(encodeURIComponent).join("/");
    await this.request(`${this.options.baseUrl}/files/${path}/file_stream`, {
      method: "POST",
      headers: this.headers(true),
      body: JSON.stringify(body),
    });
  }

  /** Uploads run files: asks `RunUploadUrls` for signed URLs, then PUTs each file with the headers it names. */
  async uploadFiles(run: RunPath, files: Array<{ path: string; content: string }>): Promise<void> {
    if (files.length === 0) return;
    const data = await this.graphql<RunUploadUrlsResult>(RUN_UPLOAD_URLS, "RunUploadUrls", {
      name: run.project,
      entity: run.entity,
      run: run.runId,
      files: files.map((f) => f.path),
    });
    const listing = data.model?.bucket?.files;
    const headers: Record<string, string> = {};
    for (const h of listing?.uploadHeaders ?? []) {
      const colon = h.indexOf(":");
      if (colon > 0) headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim();
    }
    const urls = new Map((listing?.edges ?? []).map((e) => [e.node?.name, e.node?.url]));
    for (const file of files) {
      const url = urls.get(file.path);
      if (!url) throw new WandbHttpError(`RunUploadUrls gave no URL for ${file.path}`);
      await this.request(url, { method: "PUT", headers, body: file.content });
    }
  }
}
