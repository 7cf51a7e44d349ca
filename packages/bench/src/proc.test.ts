import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killLiveChildren, procCpuMs, runBun, runWorker, trackChild, watchRss } from "./proc.ts";

const dir = mkdtempSync(join(tmpdir(), "air-bench-proc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function script(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, body);
  return file;
}

describe("runWorker", () => {
  test("passes its input as JSON and parses the last stdout line", async () => {
    const echo = script(
      "echo.ts",
      'const x = JSON.parse(process.argv[2]);\nconsole.log("noise");\nconsole.log(JSON.stringify({ twice: x.n * 2, env: process.env.BENCH_FLAG }));\n',
    );
    expect(await runWorker(echo, { n: 21 }, 30_000, { BENCH_FLAG: "on" })).toEqual({ twice: 42, env: "on" });
  });

  test("reports a failing worker with its stderr", async () => {
    const fail = script("fail.ts", 'console.error("broken on purpose");\nprocess.exit(3);\n');
    await expect(runWorker(fail, {}, 30_000)).rejects.toThrow(/exit 3.*broken on purpose/s);
  });

  test("kills a worker that outlives its bound", async () => {
    const hang = script("hang.ts", "setInterval(() => {}, 1000);\n");
    await expect(runWorker(hang, {}, 300)).rejects.toThrow(/killed by SIGKILL/);
  });
});

describe("runBun", () => {
  test("interrupts a child with SIGINT first, so it can stop cleanly, and collects what it printed", async () => {
    const stops = script(
      "stops.ts",
      'process.on("SIGINT", () => { console.log("stopped cleanly"); process.exit(0); });\nconsole.error("started");\nsetInterval(() => {}, 1000);\n',
    );
    const run = await runBun([stops], { cwd: dir, interruptMs: 500, killMs: 60_000 });
    expect(run).toMatchObject({ stdout: "stopped cleanly\n", stderr: "started\n", code: 0, signal: null });
    expect(run.wallS).toBeGreaterThan(0.4);
  });
});

describe("children", () => {
  test("killLiveChildren stops tracked children that still run", async () => {
    const child = trackChild(Bun.spawn(["sleep", "30"], { stdout: "ignore", stderr: "ignore" }));
    expect(killLiveChildren()).toBe(1);
    await Promise.race([child.exited, Bun.sleep(10_000)]);
    expect(child.signalCode).toBe("SIGKILL");
  });

  test("watchRss: the peak covers memory held after the watch began and let go before it stopped", () => {
    const rss = watchRss(10);
    let held: Uint8Array | undefined = new Uint8Array(64 * 2 ** 20).fill(1);
    const grown = process.memoryUsage.rss();
    expect(held.length).toBe(64 * 2 ** 20);
    held = undefined;
    const peak = rss.stop();
    expect(peak).toBeGreaterThanOrEqual(grown);
    expect(peak - rss.base).toBeGreaterThan(32 * 2 ** 20);
  });

  test("procCpuMs reads this process's CPU time and NaN for a missing pid", () => {
    let x = 0;
    for (let i = 0; i < 2e7; i++) x += i % 7;
    expect(x).toBeGreaterThan(0);
    expect(procCpuMs(process.pid)).toBeGreaterThan(0);
    expect(procCpuMs(2 ** 30)).toBeNaN();
  });
});
