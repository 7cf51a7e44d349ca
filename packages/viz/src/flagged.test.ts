import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openStore, tables } from "@air/logger-sqlite";
import { runFixture } from "@air/logger-sqlite/testing";
import type { BrowserContext } from "playwright-core";
import { createApp, type VizApp } from "./app.ts";
import { serve, type VizServer } from "./serve.ts";
import { BROWSER_ACTION_MS, launchChromium, writeStore } from "./test-browser.ts";

/** Turns the env flagged as tampering (`info.tamper`): the trajectory list's filter, the page's highlight. */
const OUTPUT = resolve(import.meta.dir, "../../../.test-output");
const dir = mkdtempSync(join(tmpdir(), "air-viz-flagged-"));
let dbPath = "";
let app: VizApp;
let server: VizServer | undefined;
let browser: BrowserContext | undefined;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  const run = await runFixture({ dir, maxSteps: 3 });
  expect(run.summary.status).toBe("completed");
  dbPath = run.dbPath;
  app = createApp(dbPath);
  server = serve({ dbPath, port: 0 });
  browser = await launchChromium(dir, { width: 1400, height: 1000 });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  app?.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = async (path: string) => {
  const res = await app.request(path);
  return { status: res.status, text: await res.text() };
};

const write = (fn: Parameters<typeof writeStore>[1]) => writeStore(dbPath, fn);

test("flagged turns: the list filters and marks their trajectories, the page highlights them", async () => {
  const writer = openStore(dbPath);
  const first = writer.select().from(tables.turns).limit(2).all();
  const [a, b] = first as [(typeof first)[number], (typeof first)[number]];
  const setInfo = (t: typeof a, info: string | null) =>
    writer.$client.run("UPDATE turns SET info_json = ? WHERE run_id = ? AND rollout_id = ? AND idx = ?", [
      info,
      t.runId,
      t.rolloutId,
      t.idx,
    ]);
  setInfo(a, '{"tamper":["metric-json","score-jump"]}');
  setInfo(b, '{"tamper":[]}'); // an empty list is no flag
  try {
    const list = await get("/runs/1/trajectories?flagged=yes");
    expect(list.text).toContain("1 trajectories");
    expect(list.text).toContain(`>${a.rolloutId}</a>`);
    expect(list.text).toMatch(/<tr class="status-\w+ flagged">/);
    expect(list.text).toContain('<span class="flag">1</span>');
    expect(list.text).toContain('name="flagged" value="yes" checked');
    const all = await get("/runs/1/trajectories");
    expect(all.text).toContain("12 trajectories");
    expect(all.text.match(/ flagged">/g)).toHaveLength(1);
    const page = await get(`/runs/1/trajectories/${encodeURIComponent(a.rolloutId)}`);
    expect(page.text.match(/class="turn[^"]* tampered"/g)).toHaveLength(1);
    expect(page.text).toContain("tamper: metric-json, score-jump");
    expect(page.text).toContain("only flagged turns (1)");
    expect((await get("/runs/1/trajectories?flagged=no")).status).toBe(400);
  } finally {
    setInfo(a, a.infoJson);
    setInfo(b, b.infoJson);
    writer.$client.close();
  }
});

test("flagged turns in Chromium: the list's 'flagged only' filter, the page's red highlight and turn filter", async () => {
  const turn = (() => {
    const db = openStore(dbPath);
    try {
      return db.$client
        .query(
          "SELECT rollout_id AS rolloutId, idx, info_json AS info FROM turns WHERE run_id = 1 AND idx = 1 LIMIT 1",
        )
        .get() as { rolloutId: string; idx: number; info: string | null };
    } finally {
      db.$client.close();
    }
  })();
  const setInfo = (info: string | null) =>
    write((db) =>
      db.$client.run("UPDATE turns SET info_json = ? WHERE run_id = 1 AND rollout_id = ? AND idx = ?", [
        info,
        turn.rolloutId,
        turn.idx,
      ]),
    );
  setInfo('{"tamper":["writes-evaluation-file"]}');
  const page = await browser!.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.setDefaultTimeout(BROWSER_ACTION_MS);
  try {
    await page.goto(`${server!.url}runs/1/trajectories`);
    await page.check("input[name=flagged]");
    await page.click("form.filters button");
    await page.waitForURL(/flagged=yes/);
    expect(await page.locator("table.trajectories tbody tr").count()).toBe(1);
    expect(await page.locator("table.trajectories tbody tr.flagged a").first().textContent()).toBe(
      turn.rolloutId,
    );
    await page.click("table.trajectories tbody tr.flagged a");
    await page.waitForSelector("section.turn.tampered");
    const style = await page
      .locator("section.turn.tampered")
      .evaluate((e) => [getComputedStyle(e).borderLeftColor, getComputedStyle(e).backgroundColor]);
    expect(style).toEqual(["rgb(220, 38, 38)", "rgb(254, 242, 242)"]);
    const all = await page.locator("section.turn:visible").count();
    expect(all).toBeGreaterThan(1);
    await page.check("#only-flagged");
    expect(await page.locator("section.turn:visible").count()).toBe(1);
    expect(await page.locator("section.turn:visible").getAttribute("data-turn")).toBe(String(turn.idx));
    await page.uncheck("#only-flagged");
    expect(await page.locator("section.turn:visible").count()).toBe(all);
    await page.screenshot({ path: join(OUTPUT, "viz-flagged.png"), fullPage: true });
    expect(errors).toEqual([]);
  } finally {
    await page.close();
    setInfo(turn.info);
  }
}, 300_000);
