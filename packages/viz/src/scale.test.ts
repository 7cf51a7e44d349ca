import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "@air/logger-sqlite";
import { runAndKill } from "@air/logger-sqlite/testing";
import { createApp } from "./app.ts";

const dir = mkdtempSync(join(tmpdir(), "air-viz-scale-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TRAJECTORIES = 10_000;
const TURNS = 6;

/** Writes a run of 10k trajectories × 6 turns straight into a store (the shape the recorder writes). */
function bigStore(path: string): void {
  const db = openStore(path);
  const c = db.$client;
  c.run("INSERT INTO runs (name, status, started_at) VALUES ('big', 'completed', 0)");
  const traj = c.prepare(
    `INSERT INTO trajectories (run_id, rollout_id, step, example_id, task, group_id, status, stop_reason, reward,
       baseline_score, final_score, improvement, validated, turn_count, validation_history_json, initial_messages_json)
     VALUES (1, ?, ?, ?, ?, ?, 'done', 'done', ?, 0.5, ?, ?, 1, ${TURNS}, '[]', '[]')`,
  );
  const turn = c.prepare(
    `INSERT INTO turns (run_id, rollout_id, idx, prompt_messages_json, completion, command, observation, reward)
     VALUES (1, ?, ?, '[]', ?, ?, ?, 0)`,
  );
  c.transaction(() => {
    for (let i = 0; i < TRAJECTORIES; i++) {
      const step = Math.floor(i / 64);
      const task = `task${i % 5}`;
      const score = 0.5 + (i % 100) / 1000;
      traj.run(
        `s${step}-r${i}`,
        step,
        `${task}-0`,
        task,
        `${step}:${task}-0`,
        score - 0.5,
        score,
        score - 0.5,
      );
      for (let k = 0; k < TURNS; k++)
        turn.run(
          `s${step}-r${i}`,
          k,
          `reply ${k} of ${i}${i === 7777 ? " needle-xyz" : ""}`,
          "ls",
          "output ".repeat(20),
        );
    }
  })();
  c.close();
}

describe("a run with 10k trajectories", () => {
  const path = join(dir, "big.db");
  let app: ReturnType<typeof createApp>;
  beforeAll(() => {
    bigStore(path);
    app = createApp(path);
  }, 120_000); // 60k rows written and indexed: ~1 s idle, over bun's 5 s default on a loaded machine
  afterAll(() => app?.close());

  test("pages, filters and searches return the right rows", async () => {
    const timings: Record<string, number> = {};
    const get = async (url: string) => {
      const t0 = performance.now();
      const res = await app.request(url);
      const text = await res.text();
      timings[url] = Math.round((performance.now() - t0) * 10) / 10;
      expect(res.status).toBe(200);
      return text;
    };
    const first = await get("/runs/1/trajectories");
    expect(first).toContain("10000 trajectories · page 1 of 200");
    const last = await get("/runs/1/trajectories?page=200");
    expect(last.match(/name="a"/g)).toHaveLength(50);
    expect(last).toContain("s0-r0");
    expect(await get("/runs/1/trajectories?task=task3&page=10")).toContain(
      "2000 trajectories · page 10 of 40",
    );
    expect(await get("/runs/1/trajectories?step=100")).toContain("64 trajectories");
    const found = await get("/runs/1/trajectories?q=needle-xyz");
    expect(found).toContain("1 trajectories");
    expect(found).toContain("s121-r7777");
    expect(await get("/runs/1/trajectories?sort=improvement&per=200&page=3")).toContain("page 3 of 50");
    expect(await get("/runs/1/tasks")).toContain("task4");
    expect(await get("/api/runs/1/series")).toContain("derived/improvement_per_episode");
    // What each open live stream runs every 500 ms.
    for (let i = 0; i < 20; i++) await get("/api/runs/1/status");
    expect(timings["/api/runs/1/status"]).toBeLessThan(50);
    console.log("10k-trajectory request times (ms):", JSON.stringify(timings));
  });
});

test("the dashboard opens a database whose run was killed with SIGKILL mid-step", async () => {
  const dbPath = await runAndKill(join(dir, "killed"), 2, 60_000);
  const app = createApp(dbPath);
  try {
    const run = await app.request("/runs/1");
    expect(run.status).toBe(200);
    const text = await run.text();
    expect(text).toMatch(/data-status="(running|dead)"/);
    expect((text.match(/<tr data-step="/g) ?? []).length).toBeGreaterThanOrEqual(2);
    const list = await (await app.request("/runs/1/trajectories?status=done")).text();
    const id = /href="\/runs\/1\/trajectories\/([^"]+)"/.exec(list)?.[1];
    expect(id).toBeDefined();
    const viewer = await app.request(`/runs/1/trajectories/${id}`);
    expect(viewer.status).toBe(200);
    expect((await viewer.text()).match(/<section class="turn/g)).toHaveLength(6);
  } finally {
    app.close();
  }
}, 90_000);
