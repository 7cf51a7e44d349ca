import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "@air/core";
import { WandbClient } from "./client.ts";
import { OnlineSink } from "./online.ts";
import { type FakeWandb, fakeWandb } from "./test-server.ts";

const KEY = "0123456789abcdef0123456789abcdef01234567";
const errors: string[] = [];
const log = createLogger("wandb", (level, _source, message) => {
  if (level === "error") errors.push(message);
});

let server: FakeWandb | undefined;
/** How long a queued line may take to reach the fake server on a busy machine (about 10 ms idle). */
const SEND_WAIT_MS = 30_000;
afterEach(() => {
  server?.stop();
  server = undefined;
  errors.length = 0;
});

function sink(baseUrl: string, entity = "", attempts = 3) {
  const client = new WandbClient({ baseUrl, apiKey: KEY, timeoutMs: 5000, attempts, retryDelayMs: 5 });
  const info = {
    runId: "abc12345",
    entity,
    project: "air-test",
    displayName: "fixture",
    tags: [],
    startTimeMs: 0,
  };
  return new OnlineSink(client, info, { flushMs: 10, finishTimeoutMs: 5000, log });
}

const squash = (s: string) => s.replace(/\s+/g, "");
type Body = Record<string, unknown>;
const sdk = (
  JSON.parse(readFileSync(join(import.meta.dir, "fixtures", "sdk-0.5.1-requests.json"), "utf8")) as {
    requests: Array<{ method: string; path: string; body: Body }>;
  }
).requests;

describe("online sink, against the requests the official JS SDK sends", () => {
  test("same operations, queries, paths, auth and file-stream bodies as @wandb/sdk 0.5.1 for the same run", async () => {
    server = fakeWandb();
    const s = sink(server.baseUrl);
    await s.start();
    s.history({ "reward/mean": 0.5, _step: 0, _runtime: 1, _timestamp: 2 }, 0);
    s.history({ "reward/mean": 0.75, _step: 1, _runtime: 1, _timestamp: 2 }, 1);
    s.summary({ "reward/mean": 0.75, _step: 1, _runtime: 1, _timestamp: 2 });
    await s.finish(0);
    const ours = server.requests;
    expect(ours.map((r) => `${r.method} ${r.path}`)).toEqual(sdk.map((r) => `${r.method} ${r.path}`));
    expect(ours[0]!.path).toBe("/graphql");
    for (const k of [0, 1]) {
      const mine = ours[k]!.body as Body;
      const theirs = sdk[k]!.body;
      expect(mine.operationName).toBe(theirs.operationName as string);
      expect(squash(mine.query as string)).toBe(squash(theirs.query as string));
    }
    const upsert = (ours[1]!.body as Body).variables as Body;
    const sdkUpsert = sdk[1]!.body.variables as Body;
    for (const key of ["name", "project", "entity", "displayName"])
      expect(upsert[key]).toEqual(sdkUpsert[key]);
    for (const key of Object.keys(upsert)) expect(sdk[1]!.body.query as string).toContain(`$${key}:`);
    expect(ours[0]!.headers.authorization).toBe(`Basic ${Buffer.from(`api:${KEY}`).toString("base64")}`);
    expect(ours.every((r) => r.headers["content-type"] === "application/json")).toBe(true);

    type Files = Record<string, { offset: number; content: string[] }>;
    const mineFiles = (ours[2]!.body as { files: Files }).files;
    const sdkFiles = (sdk[2]!.body as { files: Files }).files;
    expect(Object.keys(mineFiles).sort()).toEqual(Object.keys(sdkFiles).sort());
    for (const name of Object.keys(sdkFiles)) {
      expect(mineFiles[name]!.offset).toBe(sdkFiles[name]!.offset);
      expect(mineFiles[name]!.content.length).toBe(sdkFiles[name]!.content.length);
      const keys = (lines: string[]) => lines.map((l) => Object.keys(JSON.parse(l) as object).sort());
      expect(keys(mineFiles[name]!.content)).toEqual(keys(sdkFiles[name]!.content));
    }
    expect(ours[3]!.body).toEqual(sdk[3]!.body);
    expect(errors).toEqual([]);
  });

  test("history offsets run on across requests; a 500 is retried without losing or repeating lines", async () => {
    server = fakeWandb();
    const s = sink(server.baseUrl, "team");
    await s.start();
    s.history({ a: 1 }, 0);
    // the first line goes alone (offset 0) before the next request fails
    const requests = server.requests;
    const historySent = () =>
      requests.some((r) => JSON.stringify(r.body ?? null).includes("wandb-history.jsonl"));
    for (const deadline = Date.now() + SEND_WAIT_MS; !historySent() && Date.now() < deadline; )
      await Bun.sleep(10);
    server.failNext("/files/", 500);
    s.history({ a: 2 }, 1);
    s.history({ a: 3 }, 2);
    await s.finish(0);
    const streams = server.requests.filter((r) => r.path === "/files/team/air-test/abc12345/file_stream");
    const history = streams
      .map((r) => (r.body as { files?: Record<string, { offset: number; content: string[] }> }).files)
      .map((f) => f?.["wandb-history.jsonl"])
      .filter((h) => h !== undefined);
    expect(history.map((h) => h.offset)).toEqual([0, 1, 1]);
    expect(history.at(-1)!.content.map((l) => JSON.parse(l).a)).toEqual([2, 3]);
    expect(streams.at(-1)!.body).toEqual({ complete: true, exitcode: 0 });
    expect(server.graphql("Viewer")).toHaveLength(0);
  });

  test("rows logged while a send is in flight go out with the next send, none lost", async () => {
    server = fakeWandb();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let streamed = 0;
    /** Holds the first file-stream request's answer until released: the row below arrives meanwhile. */
    class HeldClient extends WandbClient {
      override async fileStream(run: Parameters<WandbClient["fileStream"]>[0], body: object): Promise<void> {
        await super.fileStream(run, body);
        if (++streamed === 1) await gate;
      }
    }
    const client = new HeldClient({
      baseUrl: server.baseUrl,
      apiKey: KEY,
      timeoutMs: 5000,
      attempts: 1,
      retryDelayMs: 5,
    });
    const info = {
      runId: "abc12345",
      entity: "team",
      project: "air-test",
      displayName: "f",
      tags: [],
      startTimeMs: 0,
    };
    const s = new OnlineSink(client, info, { flushMs: 10, finishTimeoutMs: 5000, log });
    await s.start();
    s.history({ a: 1 }, 0);
    const requests = server.requests;
    for (const deadline = Date.now() + SEND_WAIT_MS; streamed === 0 && Date.now() < deadline; )
      await Bun.sleep(10);
    s.history({ a: 2 }, 1);
    release();
    await s.finish(0);
    const history = requests
      .map((r) => (r.body as { files?: Record<string, { offset: number; content: string[] }> }).files)
      .map((f) => f?.["wandb-history.jsonl"])
      .filter((h) => h !== undefined)
      .map((h) => [h.offset, h.content.map((l) => JSON.parse(l).a)]);
    expect(history).toEqual([
      [0, [1]],
      [1, [2]],
    ]);
    expect(errors).toEqual([]);
  });

  test("a rejected key at start is an error naming the status, without retries", async () => {
    server = fakeWandb();
    server.failNext("/graphql", 401);
    await expect(sink(server.baseUrl, "team").start()).rejects.toThrow(/HTTP 401/);
    expect(server.requests).toHaveLength(1);
  });

  test("files are uploaded through RunUploadUrls and listed as uploaded; config goes by UpsertBucket", async () => {
    server = fakeWandb();
    const s = sink(server.baseUrl, "team");
    await s.start();
    s.config({ run: { name: "r" }, orchestrator: { batch_size: 4 } });
    s.file("media/table/rollouts_0_abc.table.json", JSON.stringify({ columns: ["step"], data: [[0]] }));
    s.history({ rollouts: { _type: "table-file" } }, 0);
    await s.finish(0);
    const urls = server.graphql("RunUploadUrls");
    expect(urls[0]!.variables).toEqual({
      name: "air-test",
      entity: "team",
      run: "abc12345",
      files: ["media/table/rollouts_0_abc.table.json"],
    });
    const put = server.requests.find((r) => r.method === "PUT")!;
    expect(put.path).toBe("/upload/media/table/rollouts_0_abc.table.json");
    expect(put.body).toEqual({ columns: ["step"], data: [[0]] });
    const stream = server.requests.find((r) => r.path.endsWith("/file_stream"))!.body as Body;
    expect(stream.uploaded).toEqual(["media/table/rollouts_0_abc.table.json"]);
    const configs = server.graphql("UpsertBucket").filter((b) => b.variables.config !== undefined);
    expect(JSON.parse(configs[0]!.variables.config as string)).toEqual({
      run: { value: { name: "r" } },
      orchestrator: { value: { batch_size: 4 } },
    });
  });

  test("a rejected upload drops the files, not the metrics", async () => {
    server = fakeWandb();
    const s = sink(server.baseUrl, "team");
    await s.start();
    server.failNext("/upload/", 403);
    s.file("media/table/t_0_x.table.json", "{}");
    s.history({ a: 1 }, 0);
    await s.finish(0);
    const streams = server.requests.filter((r) => r.path.endsWith("/file_stream")).map((r) => r.body as Body);
    expect(streams[0]!.uploaded).toBeUndefined();
    expect(JSON.stringify(streams[0]!.files)).toContain('"a\\":1');
    expect(streams.at(-1)).toEqual({ complete: true, exitcode: 0 });
    expect(errors.join("\n")).toContain("uploading 1 file(s) failed: HTTP 403");
  });
});
