import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importAirAgent, openStore, recordAudits, recordEvaluations, tables } from "@air/logger-sqlite";
import { runFixture, XSS_PAYLOAD } from "@air/logger-sqlite/testing";
import { createApp, type VizApp } from "./app.ts";

const EVIL = "<img src=x onerror=alert(1)>";
let dir: string;
let app: VizApp;
let dbPath: string;
let importedRun: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "air-viz-"));
  const result = await runFixture({ dir, maxSteps: 3 });
  expect(result.summary.status).toBe("completed");
  dbPath = result.dbPath;
  const logFile = join(dir, "trainer.log");
  writeFileSync(logFile, `step 1 loss 0.5\n${XSS_PAYLOAD}\nstep 2 loss 0.4\n`);
  const writer = openStore(dbPath);
  writer
    .insert(tables.processes)
    .values({
      runId: 1,
      role: "inference",
      pid: 4242,
      state: "ready",
      logPath: logFile,
      updatedAt: Date.now(),
    })
    .run();
  recordEvaluations(writer, 1, [
    { task: "alpha", policy: "tiny", checkpoint: "step-3", metric: "pass@1", value: 0.5 },
    { task: "alpha", policy: "tiny", checkpoint: "step-3", metric: "pass@4", value: 0.75 },
  ]);
  writer
    .insert(tables.sandboxes)
    .values([
      { runId: 1, sandboxId: "h-a", state: "running", host: "tcp://10.0.0.2:2376", updatedAt: Date.now() },
      { runId: 1, sandboxId: "h-b", state: "removed", host: "tcp://10.0.0.2:2376", updatedAt: Date.now() },
    ])
    .run();
  const audit = { createdAt: Date.now(), config: "run.toml", task: "alpha", group: "cheating" };
  recordAudits(writer, [
    {
      ...audit,
      probe: "ground truth by find /",
      verdict: "held",
      critical: false,
      evidence: "nothing found",
    },
    { ...audit, probe: "sample submission", verdict: "broken", critical: true, score: 1, evidence: EVIL },
  ]);
  importedRun = importAirAgent(
    writer,
    [{ task: EVIL, example_id: 1, policy_step: 0, trajectory: [{ completion: EVIL, observation: EVIL }] }],
    `imported ${EVIL}`,
  );
  writer.$client.close();
  app = createApp(dbPath);
});
afterAll(() => {
  app?.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = async (path: string) => {
  const res = await app.request(path);
  return { status: res.status, text: await res.text(), headers: res.headers };
};

function expectEscaped(text: string) {
  expect(text).not.toContain("<script>window.__xss");
  expect(text).not.toContain("<img src=x");
}

describe("pages", () => {
  test("runs list", async () => {
    const r = await get("/");
    expect(r.status).toBe(200);
    expect(r.text).toContain('href="/runs/1"');
    expect(r.text).toContain("fixture");
    expect(r.text).toContain("imported &lt;img src=x onerror=alert(1)&gt;");
    expectEscaped(r.text);
    expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
  });

  test("run page: charts and the flat-reward panel", async () => {
    const r = await get("/runs/1");
    expect(r.status).toBe(200);
    expect(r.text).toContain("Why is my reward flat?");
    expect(r.text.match(/<tr data-step="/g)).toHaveLength(3);
    expect((r.text.match(/<figure class="chart"/g) ?? []).length).toBeGreaterThanOrEqual(22);
    expect(r.text).toContain("Trainer loss");
    expect(r.text).toContain('data-kind="heatmap"');
    for (const script of ["uplot.js", "format.js", "charts.js", "dashboard.js"])
      expect(r.text).toContain(`src="/static/${script}"`);
    expect(r.text).not.toMatch(/<script>(?!<\/script>)/);
  });

  test("tasks page summarises baseline, final and improvement per task", async () => {
    const r = await get("/runs/1/tasks");
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/>alpha<\/a><\/td>\s*<td>6<\/td>\s*<td>0\.500<\/td>/);
    expect(r.text).toMatch(/<td>step-3<\/td><td>pass@4<\/td>\s*<td>0\.7500<\/td>/);
    expect(r.text).toContain("1 critical finding(s)");
    expect(r.text).toMatch(/<tr class="critical"><td>alpha<\/td><td>sample submission<\/td>/);
    expect(r.text).toContain("ground truth by find /");
    expectEscaped(r.text);
    const imported = await get(`/runs/${importedRun}/tasks`);
    expect(imported.text).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expectEscaped(imported.text);
  });

  test("trajectory list: pagination, filters, search", async () => {
    const page1 = await get("/runs/1/trajectories?per=5");
    expect(page1.text).toContain("12 trajectories · page 1 of 3");
    expect(page1.text.match(/name="a"/g)).toHaveLength(5);
    expect(page1.text).toContain('rel="next"');
    const page3 = await get("/runs/1/trajectories?per=5&page=3");
    expect(page3.text.match(/name="a"/g)).toHaveLength(2);
    expect(page3.text).not.toContain('rel="next"');
    expect((await get("/runs/1/trajectories?task=alpha")).text).toContain("6 trajectories");
    expect((await get("/runs/1/trajectories?step=2&task=beta")).text).toContain("2 trajectories");
    // rollouts s0-r1 and s2-r11 broke the format at turn 1, so they never ran `python train.py`
    expect((await get("/runs/1/trajectories?q=python+train")).text).toContain("10 trajectories");
    expect((await get("/runs/1/trajectories?q=100%25")).text).toContain("0 trajectories");
    const broken = await get("/runs/1/trajectories?q=I+think");
    expect(broken.text).toMatch(/\d+ trajectories/);
    expect(broken.text).not.toContain("12 trajectories");
    expectEscaped((await get("/runs/1/trajectories?q=%3Cscript%3E")).text);
  });

  test("trajectory viewer shows every turn, escaped", async () => {
    const r = await get("/runs/1/trajectories/s0-r1");
    expect(r.status).toBe(200);
    expect(r.text.match(/<section class="turn/g)).toHaveLength(6);
    expect(r.text).toContain("format error: no ``` block found");
    expect(r.text).toContain("&lt;script&gt;window.__xss = 1&lt;/script&gt;");
    expect(r.text).toContain("cat &lt;b&gt;notes&lt;/b&gt;.md");
    expect(r.text).toContain("data-points=");
    expectEscaped(r.text);
  });

  test("a running trajectory's viewer polls for new turns", async () => {
    const writer = openStore(dbPath);
    writer
      .insert(tables.trajectories)
      .values({
        runId: importedRun,
        rolloutId: "live-1",
        step: 9,
        exampleId: "e",
        task: "alpha",
        groupId: "9:e",
      })
      .run();
    writer
      .insert(tables.turns)
      .values({
        runId: importedRun,
        rolloutId: "live-1",
        idx: 0,
        promptMessagesJson: "[]",
        completion: EVIL,
        observation: "o",
      })
      .run();
    // Only a rollout of a run that is still running (fresh heartbeat) gets the live block.
    const before = writer.$client.query("SELECT status FROM runs WHERE id = ?").get(importedRun) as {
      status: string;
    };
    writer.$client.run("UPDATE runs SET status = 'running', heartbeat_at = ? WHERE id = ?", [
      Date.now(),
      importedRun,
    ]);
    writer.$client.close();
    const page = await get(`/runs/${importedRun}/trajectories/live-1`);
    expect(page.text).toContain(`data-fragment="/runs/${importedRun}/fragments/turns/live-1"`);
    expect(page.text).toContain('id="live"');
    expectEscaped(page.text);
    const fragment = await get(`/runs/${importedRun}/fragments/turns/live-1`);
    expect(fragment.text.match(/<section class="turn/g)).toHaveLength(1);
    expectEscaped(fragment.text);
    expect((await get("/runs/1/trajectories/s0-r1")).text).not.toContain("data-fragment");
    expect((await get("/runs/1/fragments/turns/nope")).status).toBe(404);
    const restore = openStore(dbPath);
    restore.$client.run("UPDATE runs SET status = ? WHERE id = ?", [before.status, importedRun]);
    restore.$client.close();
    expect((await get(`/runs/${importedRun}/trajectories/live-1`)).text).not.toContain('id="live"');
  });

  test("compare shows two trajectories side by side", async () => {
    const r = await get("/runs/1/compare?a=s0-r0&b=s0-r1");
    expect(r.status).toBe(200);
    expect(r.text.match(/<div class="column">/g)).toHaveLength(2);
    expect(r.text.match(/<section class="turn/g)).toHaveLength(12);
    expectEscaped(r.text);
  });

  test("system page: processes with escaped log tails, sandboxes, log lines", async () => {
    const r = await get("/runs/1/system");
    expect(r.status).toBe(200);
    expect(r.text).toContain("inference");
    expect(r.text).toContain("4242");
    expect(r.text).toContain("step 2 loss 0.4");
    expect(r.text).toContain("box-s0-r0");
    expect(r.text).toMatch(/<tr><td>tcp:\/\/10\.0\.0\.2:2376<\/td><td>1<\/td><td>2<\/td><\/tr>/);
    expectEscaped(r.text);
    const fragment = await get("/runs/1/fragments/system");
    expect(fragment.text).toContain("Container pool");
  });

  test("export gives air-agent JSON", async () => {
    const res = await app.request("/runs/1/export.json");
    expect(res.headers.get("content-disposition")).toContain("attachment");
    const body = (await res.json()) as Array<Record<string, unknown>>;
    expect(body).toHaveLength(12);
    expect(Object.keys(body[0]!)).toContain(
      "validation_history" in (body[0]!.metrics as object) ? "metrics" : "x",
    );
  });
});

describe("api", () => {
  test("series: step, trainer, derived, per-task and pass@k", async () => {
    const res = await app.request("/api/runs/1/series");
    const { series } = (await res.json()) as { series: Record<string, Array<[number, number]>> };
    expect(series["reward/mean"]).toHaveLength(3);
    expect(series["trainer/loss"]).toEqual([
      [0, 1],
      [1, 0.5],
      [2, 1 / 3],
    ]);
    expect(series["derived/validate_rate"]).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
    expect(series["task/alpha/baseline"]![0]).toEqual([0, 0.5]);
    expect(series["task/beta/final_score"]).toHaveLength(3);
    expect(series["derived/advantage_p50"]).toHaveLength(3);
    expect(series["derived/improvement_per_episode"]).toHaveLength(12);
    expect(series["derived/parse_errors"]!.reduce((a, [, n]) => a + n, 0)).toBe(2);
    expect(series["pass@k/step-3"]).toEqual([
      [1, 0.5],
      [4, 0.75],
    ]);
  });

  test("series: the advantage heatmap has one column per step, each a distribution", async () => {
    const res = await app.request("/api/runs/1/series");
    const { heatmap } = (await res.json()) as {
      heatmap: { steps: number[]; edges: number[]; share: number[][]; quantiles: Record<string, number[]> };
    };
    expect(heatmap.steps).toEqual([0, 1, 2]);
    expect(heatmap.edges).toHaveLength(25);
    for (const column of heatmap.share) expect(column.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    expect(heatmap.quantiles.p50).toHaveLength(3);
  });

  test("uPlot is served from node_modules, with the CSP intact", async () => {
    const js = await app.request("/static/uplot.js");
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("javascript");
    expect(await js.text()).toContain("uPlot");
    const css = await app.request("/static/uplot.css");
    expect(await css.text()).toContain(".uplot");
    expect(css.headers.get("content-security-policy")).toContain("script-src 'self'");
  });

  test("status changes when the run writes (live reads through the read-only handle)", async () => {
    const before = (await (await app.request("/api/runs/1/status")).json()) as {
      version: string;
      lastStep: number;
    };
    expect(before.lastStep).toBe(2);
    const writer = openStore(dbPath);
    writer.insert(tables.steps).values({ runId: 1, step: 3, startedAt: 1, endedAt: 2, turnCount: 0 }).run();
    writer.$client.close();
    const after = (await (await app.request("/api/runs/1/status")).json()) as {
      version: string;
      lastStep: number;
    };
    expect(after.lastStep).toBe(3);
    expect(after.version).not.toBe(before.version);
  });
});

describe("bad ids and parameters", () => {
  test.each([
    "/runs/999",
    "/runs/abc",
    "/runs/1e3",
    "/runs/999/trajectories",
    "/runs/1/trajectories/nope",
    "/runs/1/trajectories/%3Cscript%3E",
    "/runs/1/compare?a=s0-r0&b=nope",
    "/runs/999/system",
    "/runs/999/tasks",
    "/runs/999/fragments/flat",
    "/runs/999/export.json",
    "/api/runs/999/series",
    "/api/runs/x/status",
    "/static/secret.js",
    "/nowhere",
  ])("404 for %s", async (path) => {
    const r = await get(path);
    expect(r.status).toBe(404);
    expectEscaped(r.text);
  });

  test.each([
    "/runs/1/trajectories?page=0",
    "/runs/1/trajectories?page=abc",
    "/runs/1/trajectories?per=1000",
    "/runs/1/trajectories?step=-1",
    "/runs/1/trajectories?status=weird",
    "/runs/1/trajectories?sort=id;DROP",
    "/runs/1/trajectories?bogus=1",
    "/runs/1/compare?a=s0-r0",
    "/runs/1/compare",
  ])("400 for %s", async (path) => {
    expect((await get(path)).status).toBe(400);
  });
});
