import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, tables } from "@air/logger-sqlite";
import { runFixture } from "@air/logger-sqlite/testing";
import { createApp, type VizApp } from "./app.ts";

const dir = mkdtempSync(join(tmpdir(), "air-viz-live-"));
let app: VizApp;
let dbPath: string;

beforeAll(async () => {
  const run = await runFixture({ dir, maxSteps: 2 });
  dbPath = run.dbPath;
  app = createApp(dbPath, { streamCheckMs: 20, keepAliveMs: 100 });
});
afterAll(() => {
  app.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Reads a text stream until `pattern` matched `count` times in everything read so far, or `ms` passed. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  pattern: RegExp,
  count: number,
  ms: number,
  text = { all: "" },
): Promise<string> {
  const decoder = new TextDecoder();
  const deadline = Date.now() + ms;
  while ((text.all.match(pattern) ?? []).length < count && Date.now() < deadline) {
    const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => undefined)]);
    if (!chunk || chunk.done) break;
    text.all += decoder.decode(chunk.value);
  }
  return text.all;
}

test("the events stream sends the status at once, again when the store changes, and keep-alives between", async () => {
  const controller = new AbortController();
  const res = await app.request("/api/runs/1/events", { signal: controller.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const reader = res.body!.getReader();
  const text = { all: "" };
  await readUntil(reader, /event: status/g, 1, 3000, text);
  const first = JSON.parse(/data: (.*)\n/.exec(text.all)![1]!) as { lastStep: number; state: string };
  expect(first).toMatchObject({ lastStep: 1, state: "completed" });
  await readUntil(reader, /: keep-alive/g, 1, 3000, text);
  expect(text.all).toContain(": keep-alive");

  const writer = openStore(dbPath);
  writer.insert(tables.steps).values({ runId: 1, step: 2, startedAt: 1, endedAt: 2 }).run();
  writer.$client.close();
  await readUntil(reader, /event: status/g, 2, 3000, text);
  const events = [...text.all.matchAll(/event: status\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1]!));
  expect(events).toHaveLength(2);
  expect(events[1].lastStep).toBe(2);
  controller.abort();
  await reader.cancel().catch(() => {});
});

test("a running run whose writer stopped beating streams as dead", async () => {
  const writer = openStore(dbPath);
  writer
    .update(tables.runs)
    .set({ status: "running", heartbeatAt: Date.now() - 120_000 })
    .run();
  writer.$client.close();
  const status = (await (await app.request("/api/runs/1/status")).json()) as {
    status: string;
    state: string;
  };
  expect(status).toMatchObject({ status: "running", state: "dead" });
  const page = await (await app.request("/")).text();
  expect(page).toContain('class="status-dead"');
  const writer2 = openStore(dbPath);
  writer2.update(tables.runs).set({ heartbeatAt: Date.now() }).run();
  writer2.$client.close();
  expect(((await (await app.request("/api/runs/1/status")).json()) as { state: string }).state).toBe(
    "running",
  );
});

test("unknown run: 404, no stream", async () => {
  expect((await app.request("/api/runs/99/events")).status).toBe(404);
});
