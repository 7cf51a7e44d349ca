import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { tables } from "@air/logger-sqlite";
import { runFixture } from "@air/logger-sqlite/testing";
import type { BrowserContext } from "playwright-core";
import { serve, type VizServer } from "./serve.ts";
import { BROWSER_ACTION_MS, launchChromium, writeStore } from "./test-browser.ts";
import { comparisonFixture } from "./test-comparison.ts";
import { runTreeFixture } from "./test-tree.ts";

const OUTPUT = resolve(import.meta.dir, "../../../.test-output");
const dir = mkdtempSync(join(tmpdir(), "air-viz-browser-"));
let server: VizServer | undefined;
let browser: BrowserContext | undefined;
let dbPath: string;

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  const run = await runFixture({ dir, maxSteps: 4, evalEvery: 2 });
  expect(run.summary.status).toBe("completed");
  dbPath = run.dbPath;
  server = serve({ dbPath, port: 0, comparison: comparisonFixture() });
  browser = await launchChromium(dir, { width: 1400, height: 1000 });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Pixels of a canvas that are not blank. */
const inkedPixels = (sel: string) => {
  const canvas = document.querySelector(sel) as HTMLCanvasElement;
  const data = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
  let n = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
  return n;
};

/** Every axis tick label the charts drew (their figures record them). */
const tickLabels = () =>
  [...document.querySelectorAll<HTMLElement>("figure.chart[data-drawn]")].flatMap((f) => [
    ...JSON.parse(f.dataset.xTicks ?? "[]"),
    ...JSON.parse(f.dataset.yTicks ?? "[]"),
  ]) as string[];

const REWARD = `figure[data-series^='["reward/mean"']`;

const write = (fn: Parameters<typeof writeStore>[1]) => writeStore(dbPath, fn);

test("dashboard in Chromium: uPlot charts with human axes, a heatmap, live steps by server-sent events", async () => {
  const page = await browser!.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text());
  });
  page.on("response", (r) => {
    if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) errors.push(`${r.status()} ${r.url()}`);
  });
  page.setDefaultTimeout(BROWSER_ACTION_MS);

  await page.goto(server!.url);
  await page.click("a[href='/runs/1']");
  await page.waitForSelector("body[data-charts-drawn]");
  await page.waitForSelector("body[data-live-mode='stream']");
  const figures = await page.locator("figure.chart[data-series]").count();
  expect(figures).toBeGreaterThanOrEqual(22);
  expect(await page.locator("figure.chart[data-drawn]").count()).toBe(figures);
  expect(await page.locator(`${REWARD} .uplot canvas`).count()).toBe(1);
  expect(Number(await page.getAttribute(REWARD, "data-point-count"))).toBe(12);
  expect(await page.evaluate(inkedPixels, `${REWARD} canvas`)).toBeGreaterThan(1000);
  // The legend lists the three series of the reward chart.
  const legend = await page.locator(`${REWARD} .u-legend`).textContent();
  for (const name of ["reward/mean", "reward/min", "reward/max"]) expect(legend).toContain(name);
  // Heatmap: shaded bins for 4 steps, quantile lines on top.
  const heat = "figure[data-kind='heatmap']";
  expect(Number(await page.getAttribute(heat, "data-point-count"))).toBeGreaterThan(4);
  expect(await page.evaluate(inkedPixels, `${heat} canvas`)).toBeGreaterThan(3000);
  // Axes for humans: no exponent, no float noise, no more than 5 decimals.
  const ticks = await page.evaluate(tickLabels);
  expect(ticks.length).toBeGreaterThan(100);
  expect(ticks.filter((t) => /e[-+]?\d|\d\.\d{6,}/.test(t))).toEqual([]);
  expect(ticks.filter((t) => t === "-0")).toEqual([]);
  // Steps are whole numbers: no tick between two steps.
  const stepTicks = JSON.parse((await page.getAttribute(REWARD, "data-x-ticks")) ?? "[]") as string[];
  expect(stepTicks.length).toBeGreaterThan(1);
  expect(stepTicks.every((t) => /^\d+$/.test(t))).toBe(true);
  expect(await page.locator("table.flat tr[data-step]").count()).toBe(4);
  await page.screenshot({ path: join(OUTPUT, "viz-run.png"), fullPage: true });
  await page.locator(REWARD).screenshot({ path: join(OUTPUT, "viz-chart-reward.png") });
  await page.locator(heat).screenshot({ path: join(OUTPUT, "viz-chart-advantage-heatmap.png") });
  // pass@k over training steps from the periodic evaluations (eval_every = 2: after steps 1 and 3).
  const passAtK = "figure[data-series*='eval/pass@']";
  expect(Number(await page.getAttribute(passAtK, "data-point-count"))).toBeGreaterThanOrEqual(4);
  await page.locator(passAtK).screenshot({ path: join(OUTPUT, "viz-chart-pass-at-k.png") });

  // A new step reaches the open page through the event stream (no reload, no polling).
  const requests: string[] = [];
  page.on("request", (r) => requests.push(new URL(r.url()).pathname));
  write((db) => {
    db.insert(tables.steps).values({ runId: 1, step: 4, startedAt: Date.now(), endedAt: Date.now() }).run();
    db.insert(tables.metrics).values({ runId: 1, step: 4, name: "reward/mean", value: 0.9 }).run();
  });
  await page.waitForSelector("table.flat tr[data-step='4']");
  await page.waitForFunction(
    (sel) => document.querySelector(sel)?.getAttribute("data-point-count") === "13",
    REWARD,
  );
  expect(requests.filter((p) => p.endsWith("/status"))).toEqual([]);
  expect(requests).toContain("/api/runs/1/series");
  expect(await page.evaluate(() => document.body.dataset.liveMode)).toBe("stream");
  expect(errors).toEqual([]);
  await page.close();
}, 300_000);

test("the live stream drops: the page falls back to polling, still updates, and returns to the stream", async () => {
  const context = browser!;
  const page = await context.newPage();
  page.setDefaultTimeout(BROWSER_ACTION_MS);
  let block = true;
  await page.route("**/api/runs/1/events", (route) => (block ? route.abort() : route.continue()));
  await page.goto(`${server!.url}runs/1`);
  await page.waitForSelector("body[data-live-mode='polling']");
  expect(await page.textContent("#live-text")).toContain("polling");
  await page.waitForSelector(`${REWARD}[data-drawn]`);
  const before = Number(await page.getAttribute(REWARD, "data-point-count"));
  write((db) => {
    db.insert(tables.steps).values({ runId: 1, step: 5, startedAt: Date.now(), endedAt: Date.now() }).run();
    db.insert(tables.metrics).values({ runId: 1, step: 5, name: "reward/mean", value: 0.95 }).run();
  });
  await page.waitForSelector("table.flat tr[data-step='5']");
  await page.waitForFunction(
    ([sel, n]) => document.querySelector(sel!)?.getAttribute("data-point-count") === n,
    [REWARD, String(before + 1)],
  );
  block = false;
  await page.waitForSelector("body[data-live-mode='stream']", { timeout: BROWSER_ACTION_MS });
  await page.close();
}, 300_000);

test("the trajectory page follows a running rollout turn by turn", async () => {
  const page = await browser!.newPage();
  page.setDefaultTimeout(BROWSER_ACTION_MS);
  const turn = (idx: number) => ({
    runId: 1,
    rolloutId: "live-r0",
    idx,
    promptMessagesJson: "[]",
    completion: `live reply ${idx}`,
    observation: `live observation ${idx}`,
  });
  write((db) => {
    db.update(tables.runs).set({ status: "running", heartbeatAt: Date.now() }).run();
    db.insert(tables.trajectories)
      .values({ runId: 1, rolloutId: "live-r0", step: 6, exampleId: "e", task: "alpha", groupId: "6:e" })
      .run();
    db.insert(tables.turns).values(turn(0)).run();
  });
  await page.goto(`${server!.url}runs/1/trajectories/live-r0`);
  await page.waitForSelector("body[data-live-mode='stream']");
  expect(await page.locator("section.turn").count()).toBe(1);
  for (const idx of [1, 2]) {
    write((db) => db.insert(tables.turns).values(turn(idx)).run());
    await page.waitForFunction((n) => document.querySelectorAll("section.turn").length === n, idx + 1);
  }
  expect(await page.locator("section.turn pre.completion").last().textContent()).toBe("live reply 2");
  expect(await page.getAttribute("dd[data-turns]", "data-turns")).toBe("3");
  await page.screenshot({ path: join(OUTPUT, "viz-trajectory-live.png"), fullPage: true });
  write((db) => db.update(tables.runs).set({ status: "completed" }).run());
  await page.close();
}, 300_000);

test("trajectory pages in Chromium: turns, validation chart, filters, compare, escaping", async () => {
  const page = await browser!.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.setDefaultTimeout(BROWSER_ACTION_MS);
  await page.goto(`${server!.url}runs/1/trajectories`);
  await page.fill("input[name=q]", "validate");
  await page.click("form.filters button");
  await page.waitForSelector("table.trajectories a");
  await page.click("table.trajectories tbody tr:first-child a");
  await page.waitForSelector("section.turn");
  await page.waitForSelector("body[data-inline-charts-drawn]");
  expect(await page.locator("section.turn").count()).toBe(6);
  expect(await page.locator("section.turn pre.completion").first().textContent()).toContain("Let me run it.");
  expect(await page.locator("section.turn.scored").count()).toBe(3);
  expect(await page.evaluate(inkedPixels, "figure[data-points] canvas")).toBeGreaterThan(500);
  expect(await page.locator("pre.observation").first().textContent()).toContain(
    "<script>window.__xss = 1</script>",
  );
  expect(await page.evaluate(() => (window as Window & { __xss?: number }).__xss)).toBeUndefined();
  await page.screenshot({ path: join(OUTPUT, "viz-trajectory.png"), fullPage: true });

  await page.check("#only-scored");
  expect(await page.locator("section.turn:visible").count()).toBe(3);
  await page.fill("#turn-filter", "submit");
  expect(await page.locator("section.turn:visible").count()).toBe(1);

  await page.goBack();
  await page.waitForSelector("table.trajectories");
  await page.check("table.trajectories tbody tr:nth-child(1) input[name=a]");
  await page.check("table.trajectories tbody tr:nth-child(2) input[name=b]");
  await page.click("form.compare-form button");
  await page.waitForSelector(".compare .column");
  expect(await page.locator(".compare .column").count()).toBe(2);
  expect(await page.locator(".compare section.turn").count()).toBe(12);
  await page.screenshot({ path: join(OUTPUT, "viz-compare.png") });
  expect(errors).toEqual([]);
  expect(statSync(join(OUTPUT, "viz-trajectory.png")).size).toBeGreaterThan(10_000);
  await page.close();
}, 300_000);

test("eval compare in Chromium: the AUP / performance-profile charts draw as steps with AUP in the legend", async () => {
  const page = await browser!.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.setDefaultTimeout(BROWSER_ACTION_MS);
  await page.goto(server!.url);
  await page.click("a[href='/eval-compare']");
  await page.waitForSelector("body[data-inline-charts-drawn]");
  const figures = page.locator("figure.chart[data-drawn]");
  expect(await figures.count()).toBe(2);
  const legend = (await figures.first().locator(".u-legend").textContent()) ?? "";
  expect(legend).toMatch(/step-0 · AUP \d\.\d{3}/);
  expect(legend).toMatch(/step-50 · AUP \d\.\d{3}/);
  expect(legend).toContain("baseline · AUP");
  expect(await page.evaluate(inkedPixels, "figure.chart canvas")).toBeGreaterThan(1500);
  const yTicks = JSON.parse((await figures.first().getAttribute("data-y-ticks")) ?? "[]") as string[];
  expect(yTicks.at(-1)).toBe("100%");
  await figures.first().screenshot({ path: join(OUTPUT, "viz-chart-aup.png") });
  expect(errors).toEqual([]);
  await page.close();
}, 300_000);

test("a tree rollout in Chromium: from the list to the tree, a leaf, its parent by the chain", async () => {
  const run = await runTreeFixture({ dir: join(dir, "tree"), maxSteps: 1 });
  expect(run.summary.status).toBe("completed");
  const treeServer = serve({ dbPath: run.dbPath, port: 0 });
  const page = await browser!.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("response", (r) => {
    if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) errors.push(`${r.status()} ${r.url()}`);
  });
  page.setDefaultTimeout(BROWSER_ACTION_MS);
  try {
    await page.goto(`${treeServer.url}runs/1/trajectories`);
    await page.click("table.trajectories a.tree-link");
    await page.waitForSelector("ul.tree.root");
    expect(await page.locator("li.node").count()).toBe(14);
    expect(await page.locator("table.siblings").count()).toBe(7);
    // Nested: the grandchildren sit two lists below the roots' list.
    expect(
      await page.locator("ul.tree.root > li > .branch > ul.tree > li > .branch > ul.tree > li").count(),
    ).toBe(8);
    await page.screenshot({ path: join(OUTPUT, "viz-tree.png"), fullPage: true });
    const leaf = page.locator("li.node[data-depth='2'] > .node-line a").first();
    const leafId = (await leaf.textContent()) ?? "";
    await leaf.click();
    await page.waitForSelector("section.tree-context");
    expect(await page.textContent("h1")).toBe(`Trajectory ${leafId}`);
    expect(await page.locator(`table.siblings tr.current[data-node='${leafId}']`).count()).toBe(1);
    await page.screenshot({ path: join(OUTPUT, "viz-tree-node.png"), fullPage: true });
    const parentId = (await page.textContent("section.tree-context a[rel=parent]")) ?? "";
    await page.click("section.tree-context a[rel=parent]");
    await page.waitForFunction(
      (id) => document.querySelector("h1")?.textContent === `Trajectory ${id}`,
      parentId,
    );
    expect(await page.locator(`section.tree-context table.siblings tr[data-node='${leafId}']`).count()).toBe(
      1,
    );
    expect(await page.textContent("section.tree-context")).toContain("Children (branched at turn 2)");
    expect(errors).toEqual([]);
  } finally {
    await page.close();
    await treeServer.stop();
  }
}, 300_000);
