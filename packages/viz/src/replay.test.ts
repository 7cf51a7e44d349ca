import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runFixture } from "@air/logger-sqlite/testing";
import { createApp, type VizApp } from "./app.ts";
import type { ReplayRunner } from "./replay.ts";

let dir = "";
let dbPath = "";
let runDir = "";
const apps: VizApp[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "air-viz-replay-"));
  ({ dbPath, runDir } = await runFixture({ dir, maxSteps: 1 }));
});
afterAll(() => {
  for (const app of apps) app.close();
  rmSync(dir, { recursive: true, force: true });
});

function appWith(replay?: ReplayRunner, replayTimeoutMs?: number): VizApp {
  const app = createApp(dbPath, { replay, replayTimeoutMs });
  apps.push(app);
  return app;
}

const post = (app: VizApp, path: string, times = "2") =>
  app.request(path, { method: "POST", body: new URLSearchParams({ times }) });

/** Polls the status page until it is no longer running (at most `ms`: generous, as on a busy machine). */
async function settled(app: VizApp, path: string, ms = 60_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const text = await (await app.request(path)).text();
    if (!text.includes('data-state="running"') || Date.now() > deadline) return text;
    await Bun.sleep(20);
  }
}

describe("the trajectory page's Replay button", () => {
  const traj = "/runs/1/trajectories/s0-r0";

  test("runs the replay in the background with the run dir, then shows its report", async () => {
    const calls: Array<{ runDir: string; rolloutId: string; times: number }> = [];
    const app = appWith(async ({ runDir, rolloutId, times }) => {
      calls.push({ runDir, rolloutId, times });
      await Bun.sleep(100);
      return { text: `replayed ${rolloutId} ${times}× <b>escaped</b>` };
    });
    expect(await (await app.request(traj)).text()).toContain(`action="${traj}/replay"`);
    const res = await post(app, `${traj}/replay`, "2");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${traj}/replay`);
    const running = await (await app.request(`${traj}/replay`)).text();
    expect(running).toContain('data-state="running"');
    expect(running).toContain('http-equiv="refresh"');
    // A second press while it runs joins the same replay.
    await post(app, `${traj}/replay`, "2");
    const done = await settled(app, `${traj}/replay`);
    expect(done).toContain('data-state="done"');
    expect(done).toContain("replayed s0-r0 2× &lt;b&gt;escaped&lt;/b&gt;");
    expect(calls).toEqual([{ runDir, rolloutId: "s0-r0", times: 2 }]);
  });

  test("a replay that fails or outlives its time limit shows why, and the limit aborts it", async () => {
    let aborted = false;
    const app = appWith(async ({ rolloutId, signal }) => {
      if (rolloutId === "s0-r1") throw new Error("the run's env has no train example");
      signal.addEventListener("abort", () => {
        aborted = true;
      });
      return new Promise(() => {}); // hangs
    }, 300);
    await post(app, "/runs/1/trajectories/s0-r1/replay");
    expect(await settled(app, "/runs/1/trajectories/s0-r1/replay")).toContain(
      "replay failed: the run&#39;s env has no train example",
    );
    await post(app, `${traj}/replay`);
    const page = await settled(app, `${traj}/replay`);
    expect(page).toContain('data-state="failed"');
    expect(page).toContain("replay timed out after 0 s (aborted)");
    expect(aborted).toBe(true);
  });

  test("at most maxReplays run at once: another trajectory's press answers 429 until one ends", async () => {
    let finish = () => {};
    const gate = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const app = createApp(dbPath, {
      replay: async ({ rolloutId }) => {
        await gate;
        return { text: `done ${rolloutId}` };
      },
      maxReplays: 1,
    });
    apps.push(app);
    expect((await post(app, `${traj}/replay`)).status).toBe(303);
    const busy = await post(app, "/runs/1/trajectories/s0-r1/replay");
    expect(busy.status).toBe(429);
    expect(await busy.text()).toContain("1 replays are running already");
    expect((await post(app, `${traj}/replay`)).status).toBe(303); // the same one: joins it
    finish();
    expect(await settled(app, `${traj}/replay`)).toContain("done s0-r0");
    expect((await post(app, "/runs/1/trajectories/s0-r1/replay")).status).toBe(303);
  });

  test("bad input: times out of range, unknown run; without a runner no button and 501", async () => {
    const app = appWith(async () => ({ text: "" }));
    for (const times of ["0", "11", "x"]) expect((await post(app, `${traj}/replay`, times)).status).toBe(400);
    expect((await post(app, "/runs/9/trajectories/s0-r0/replay")).status).toBe(404);
    const bare = appWith();
    expect(await (await bare.request(traj)).text()).not.toContain("/replay");
    const res = await post(bare, `${traj}/replay`);
    expect(res.status).toBe(501);
    expect(await res.text()).toContain("bun run viz");
  });
});
