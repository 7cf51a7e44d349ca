import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, STALE_MS, tables } from "@air/logger-sqlite";
import { runFixture } from "@air/logger-sqlite/testing";
import type { BrowserContext, Page } from "playwright-core";
import { serve, type VizServer } from "./serve.ts";
import { BROWSER_ACTION_MS, launchChromium } from "./test-browser.ts";

/**
 * The run header (`#live-text`) in Chromium says what state the run is in, as the store says it: a finished run
 * is "completed" and never "live"; a running run with a fresh heartbeat is "running · … · live"; a running run
 * whose heartbeat stopped (launcher killed) is "dead"; and an open page follows the changes by the stream.
 */
const dir = mkdtempSync(join(tmpdir(), "air-viz-header-"));
let server: VizServer | undefined;
let browser: BrowserContext | undefined;
let dbPath: string;

beforeAll(async () => {
  const run = await runFixture({ dir, maxSteps: 2 });
  expect(run.summary.status).toBe("completed");
  dbPath = run.dbPath;
  server = serve({ dbPath, port: 0 });
  browser = await launchChromium(dir);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function setRun(values: Partial<typeof tables.runs.$inferInsert>) {
  const writer = openStore(dbPath);
  try {
    writer.update(tables.runs).set(values).run();
  } finally {
    writer.$client.close();
  }
}

/** Opens the run's charts page and waits for the header to be drawn from the stream's first status. */
async function open(path = "runs/1"): Promise<Page> {
  const page = await browser!.newPage();
  page.setDefaultTimeout(BROWSER_ACTION_MS);
  await page.goto(`${server!.url}${path}`);
  await page.waitForSelector("body[data-live-mode='stream']");
  await page.waitForFunction(() => document.getElementById("live-text")?.textContent?.includes("last step"));
  return page;
}

const header = (page: Page) => page.textContent("#live-text").then((t) => t ?? "");
const waitHeader = (page: Page, pattern: RegExp) =>
  page.waitForFunction(
    (source) => new RegExp(source).test(document.getElementById("live-text")?.textContent ?? ""),
    pattern.source,
  );

test("a finished run reads completed, with its last step and rollouts, and never live", async () => {
  const page = await open();
  const text = await header(page);
  expect(text).toMatch(/^completed · last step 1 · \d+ rollouts$/);
  expect(text).not.toMatch(/\blive\b|running/);
  expect(await page.getAttribute("#live", "data-status")).toBe("completed");
  await page.close();
}, 300_000);

test("a running run reads running · live; when its heartbeat stops it turns dead, then completed, on the open page", async () => {
  setRun({ status: "running", heartbeatAt: Date.now(), endedAt: null });
  const page = await open();
  expect(await header(page)).toMatch(/^running · last step 1 · \d+ rollouts · live$/);
  expect(await page.getAttribute("#live", "data-status")).toBe("running");
  setRun({ heartbeatAt: Date.now() - STALE_MS - 60_000 });
  await waitHeader(page, /^dead: no heartbeat since \d\d:\d\d:\d\d UTC/);
  expect(await header(page)).not.toMatch(/\blive\b|running/);
  expect(await page.getAttribute("#live", "data-status")).toBe("dead");
  setRun({ status: "completed", endedAt: Date.now() });
  await waitHeader(page, /^completed · /);
  expect(await header(page)).not.toMatch(/\blive\b/);
  await page.close();
}, 300_000);

test("a dead run (running in the store, heartbeat lost) reads dead on the charts, system and trajectory pages", async () => {
  const beat = Date.now() - STALE_MS - 120_000;
  setRun({ status: "running", heartbeatAt: beat, endedAt: null });
  const page = await open();
  const text = await header(page);
  expect(text).toStartWith(`dead: no heartbeat since ${new Date(beat).toISOString().slice(11, 19)} UTC`);
  expect(text).not.toMatch(/\blive\b|running/);
  // A rollout the store still has as running, in a run that died, will get no new turns: no live block.
  const writer = openStore(dbPath);
  const rollout = writer.select().from(tables.trajectories).limit(1).get()!.rolloutId;
  writer.$client.run("UPDATE trajectories SET status = 'running' WHERE rollout_id = ?", [rollout]);
  writer.$client.close();
  const trajectoryPage = async () =>
    (await fetch(`${server!.url}runs/1/trajectories/${encodeURIComponent(rollout)}`)).text();
  expect(await trajectoryPage()).not.toContain("new turns appear here");
  setRun({ heartbeatAt: Date.now() });
  expect(await trajectoryPage()).toContain("new turns appear here");
  setRun({ heartbeatAt: beat });
  // The first paint, before any status arrives, already says dead (it said the stored "running" on the system page).
  for (const path of ["runs/1", "runs/1/system"]) {
    const html = await (await fetch(`${server!.url}${path}`)).text();
    expect(html).toMatch(/<span id="live-text">dead<\/span>/);
  }
  await page.close();
}, 300_000);
