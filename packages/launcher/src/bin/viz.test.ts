import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { taskFigures, writeReport } from "@air/eval/testing";
import { runFixture } from "@air/logger-sqlite/testing";
import { REPO, scriptedRun } from "@air/replay/testing";

const BIN = resolve(import.meta.dir, "viz.ts");
const dir = mkdtempSync(join(tmpdir(), "air-viz-cli-"));
let runDir: string;

beforeAll(async () => {
  ({ runDir } = await runFixture({ dir, maxSteps: 1 }));
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

test("bun run viz: the Replay button replays a stored apartmentRent trajectory in fresh sandboxes", async () => {
  const replayRun = scriptedRun({
    dir,
    name: "qs",
    mlgymRoot: REPO,
    task: "apartmentRent",
    commands: ["python train.py --model linear", "validate"],
    maxTurns: 2,
  });
  const child = Bun.spawn(["bun", BIN, replayRun, "--port", "0"], { stdout: "ignore", stderr: "pipe" });
  try {
    const url = await waitForUrl(child, 15_000);
    const page = `${url}runs/1/trajectories/s0-r0`;
    expect(await (await fetch(page)).text()).toContain('action="/runs/1/trajectories/s0-r0/replay"');
    const res = await fetch(`${page}/replay`, {
      method: "POST",
      body: new URLSearchParams({ times: "1" }),
      redirect: "manual",
    });
    expect(res.status).toBe(303);
    let text = "";
    for (const deadline = Date.now() + 180_000; Date.now() < deadline; await Bun.sleep(500)) {
      text = await (await fetch(`${page}/replay`)).text();
      if (!text.includes('data-state="running"')) break;
    }
    expect(text).toContain('data-state="done"');
    expect(text).toContain("reproduced the stored score: 1/1; identical observations: 1/1");
    child.kill("SIGTERM");
    expect(await Promise.race([child.exited, Bun.sleep(10_000).then(() => "timeout")])).toBe(0);
  } finally {
    child.kill("SIGKILL");
  }
}, 400_000);
