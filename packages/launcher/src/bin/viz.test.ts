import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { taskFigures, writeReport } from "@air/eval/testing";
import { runFixture } from "@air/logger-sqlite/testing";

const BIN = resolve(import.meta.dir, "viz.ts");
const dir = mkdtempSync(join(tmpdir(), "air-viz-cli-"));
let runDir: string;

beforeAll(async () => {
  ({ runDir } = await runFixture({ dir, maxSteps: 1 }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
      const url = await waitForUrl(child, 15_000);
      expect(url).toStartWith("http://127.0.0.1:");
      const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("fixture");
      child.kill("SIGTERM");
      expect(await Promise.race([child.exited, Bun.sleep(5000).then(() => "timeout")])).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  }, 30_000);

  test("--compare alone serves the eval comparison", async () => {
    const report = writeReport(join(dir, "r.json"), "r", [taskFigures("t1", 2, 2)]);
    const child = Bun.spawn(["bun", BIN, "--compare", report, "--port", "0"], {
      stdout: "ignore",
      stderr: "pipe",
    });
    try {
      const url = await waitForUrl(child, 15_000);
      const res = await fetch(`${url}eval-compare`, { signal: AbortSignal.timeout(5000) });
      expect(await res.text()).toContain("Performance profile: best attempt");
      child.kill("SIGTERM");
      expect(await Promise.race([child.exited, Bun.sleep(5000).then(() => "timeout")])).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  }, 30_000);

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
