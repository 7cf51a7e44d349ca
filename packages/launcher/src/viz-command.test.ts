import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { exportAirAgent, openStore } from "@air/logger-sqlite";
import { runFixture } from "@air/logger-sqlite/testing";
import { taskFigures, writeReport } from "./test-reports.ts";
import { resolveStore } from "./viz-command.ts";

const BIN = resolve(import.meta.dir, "bin/viz.ts");
const dir = mkdtempSync(join(tmpdir(), "air-viz-cli-"));
let runDir: string;
let dbPath: string;

beforeAll(async () => {
  ({ runDir, dbPath } = await runFixture({ dir, maxSteps: 1 }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Bounds of a dashboard process's start (bun loading the launcher: ~1 s idle), one page, its exit on SIGTERM,
 * generous, as on a busy 2-core CI machine (each test allows 180 s in all).
 */
const START_MS = 60_000;
const PAGE_MS = 30_000;
const EXIT_MS = 30_000;

/** Reads the child's stderr until it prints the dashboard URL (or exits, or `timeoutMs` passes). */
async function waitForUrl(
  child: Bun.Subprocess<"ignore", "ignore", "pipe">,
  timeoutMs: number,
): Promise<string> {
  const reader = child.stderr.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)]);
      if (!chunk || chunk.done) break;
      text += decoder.decode(chunk.value);
      const url = /dashboard: (http:\/\/\S+)/.exec(text)?.[1];
      if (url) return url;
    }
  } finally {
    reader.releaseLock();
  }
  throw new Error(`no dashboard URL within ${timeoutMs} ms; stderr: ${text}`);
}

describe("bun run viz", () => {
  test("serves a run dir on 127.0.0.1 and stops on SIGTERM", async () => {
    const child = Bun.spawn(["bun", BIN, runDir, "--port", "0"], { stdout: "ignore", stderr: "pipe" });
    try {
      const url = await waitForUrl(child, START_MS);
      expect(url).toStartWith("http://127.0.0.1:");
      const res = await fetch(url, { signal: AbortSignal.timeout(PAGE_MS) });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("fixture");
      child.kill("SIGTERM");
      expect(await Promise.race([child.exited, Bun.sleep(EXIT_MS).then(() => "timeout")])).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  }, 180_000);

  test("--compare alone serves the eval comparison", async () => {
    const report = writeReport(join(dir, "r.json"), "r", [taskFigures("t1", 2, 2)]);
    const child = Bun.spawn(["bun", BIN, "--compare", report, "--port", "0"], {
      stdout: "ignore",
      stderr: "pipe",
    });
    try {
      const url = await waitForUrl(child, START_MS);
      const res = await fetch(`${url}eval-compare`, { signal: AbortSignal.timeout(PAGE_MS) });
      expect(await res.text()).toContain("Performance profile: best attempt");
      child.kill("SIGTERM");
      expect(await Promise.race([child.exited, Bun.sleep(EXIT_MS).then(() => "timeout")])).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  }, 180_000);

  test("bad arguments exit with 2 and the usage", async () => {
    const notReport = join(dir, "not-a-report.json");
    writeFileSync(notReport, "{}");
    for (const args of [
      [],
      ["/no/such/dir"],
      [runDir, "--port", "x"],
      [runDir, "--bogus"],
      [runDir, "--names", "a"],
      ["--compare", notReport],
    ]) {
      const r = Bun.spawnSync(["bun", BIN, ...args], { stderr: "pipe", timeout: 15_000 });
      expect(r.exitCode).toBe(2);
      expect(r.stderr.toString()).toContain("usage: viz");
    }
  }, 60_000);
});

describe("resolveStore", () => {
  test("a run dir, a database file, and air-agent JSON (imported into a fresh database)", () => {
    expect(resolveStore(runDir)).toEqual({ dbPath: join(runDir, "air.db"), imported: false });
    expect(resolveStore(dbPath)).toEqual({ dbPath, imported: false });
    const db = openStore(dbPath, { readonly: true });
    const records = exportAirAgent(db, 1);
    db.$client.close();
    const folder = join(dir, "air-agent-out");
    mkdirSync(folder);
    for (const [i, r] of records.entries()) writeFileSync(join(folder, `traj_${i}.json`), JSON.stringify(r));
    const imported = resolveStore(folder);
    expect(imported.imported).toBe(true);
    const copy = openStore(imported.dbPath, { readonly: true });
    expect(copy.$client.query("SELECT count(*) AS n FROM trajectories").get()).toEqual({ n: records.length });
    copy.$client.close();
    rmSync(resolve(imported.dbPath, ".."), { recursive: true, force: true });
    expect(() => resolveStore(join(dir, "missing"))).toThrow("no such file");
  });
});
