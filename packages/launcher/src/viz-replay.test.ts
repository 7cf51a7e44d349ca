import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { REPO, scriptedRun } from "@air/replay/testing";

const BIN = resolve(import.meta.dir, "bin/viz.ts");
const dir = mkdtempSync(join(tmpdir(), "air-viz-replay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Reads the child's stderr until it prints the dashboard URL. */
async function dashboardUrl(child: Bun.Subprocess<"ignore", "ignore", "pipe">, timeoutMs: number) {
  const reader = child.stderr.getReader();
  let text = "";
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)]);
      if (!chunk || chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
      const url = /dashboard: (http:\/\/\S+)/.exec(text)?.[1];
      if (url) return url;
    }
  } finally {
    reader.releaseLock();
  }
  throw new Error(`no dashboard URL within ${timeoutMs} ms: ${text}`);
}

test("bun run viz: the Replay button replays a stored apartmentRent trajectory in fresh sandboxes", async () => {
  const runDir = scriptedRun({
    dir,
    name: "qs",
    mlgymRoot: REPO,
    task: "apartmentRent",
    commands: ["python train.py --model linear", "validate"],
    maxTurns: 2,
  });
  const child = Bun.spawn(["bun", BIN, runDir, "--port", "0"], { stdout: "ignore", stderr: "pipe" });
  try {
    const url = await dashboardUrl(child, 15_000);
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
