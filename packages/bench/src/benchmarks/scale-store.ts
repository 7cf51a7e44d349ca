import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@air/viz";
import type { BenchReport } from "../report.ts";
import { fmt } from "../stats.ts";
import { millionStore } from "./million-store.ts";
import type { BenchOptions } from "./pipeline.ts";
import { storeGoals, storeNotes, storeTables } from "./scale-store-report.ts";
import type { ScaleStoreResult } from "./scale-store-result.ts";
import { HUGE, LONG, MILLION } from "./scale-store-shapes.ts";
import { getTimed } from "./store.ts";
import { type Recorded, recordSteps } from "./store-record.ts";

/** p-samples of each page, interleaved; a page slower than 2 s is sampled 3 times only. */
async function timePages(dbPath: string, paths: Record<string, string>, n: number) {
  const server = serve({ dbPath, port: 0 });
  const out: Record<string, number[]> = {};
  try {
    const slow = new Set<string>();
    for (const [label, p] of Object.entries(paths)) {
      const ms = await getTimed(`${server.url}${p}`, 60_000);
      if (ms > 2000) slow.add(label);
    }
    for (let i = 0; i < n; i++) {
      for (const [label, p] of Object.entries(paths)) {
        if (slow.has(label) && i >= 3) continue;
        out[label] = [...(out[label] ?? []), await getTimed(`${server.url}${p}`, 60_000)];
      }
    }
  } finally {
    await server.stop();
  }
  return out;
}

/** Every dashboard page of run 1 in a store of `steps` steps of `perStep` trajectories (ids `s<step>-r<n>`). */
function pagesOf(steps: number, perStep: number): Record<string, string> {
  const step = Math.floor(steps / 2);
  const n = step * perStep + 7;
  const id = `s${step}-r${n}`;
  const other = `s${step}-r${n + 16}`;
  const group = encodeURIComponent(`${step}:ex${n % 16}`);
  return {
    "runs list `/`": "",
    "run page": "runs/1",
    tasks: "runs/1/tasks",
    system: "runs/1/system",
    "flat-reward fragment": "runs/1/fragments/flat",
    "system fragment": "runs/1/fragments/system",
    "trajectory list, page 1": "runs/1/trajectories",
    "trajectory list, page 1000": "runs/1/trajectories?page=1000",
    "trajectory list by reward": "runs/1/trajectories?sort=reward",
    "trajectory list, one step, validated": `runs/1/trajectories?step=${step}&validated=yes`,
    "trajectory list, search (a term in every turn)": "runs/1/trajectories?q=gbm",
    "trajectory list, search (one rollout id)": `runs/1/trajectories?q=${id}`,
    "trajectory list, search (no match)": "runs/1/trajectories?q=quokka",
    "trajectory page": `runs/1/trajectories/${id}`,
    "group page": `runs/1/groups/${group}`,
    "facts fragment": `runs/1/fragments/facts/${id}`,
    "turns fragment": `runs/1/fragments/turns/${id}`,
    "compare two": `runs/1/compare?a=${id}&b=${other}`,
    "API runs": "api/runs",
    "API status (what live updates poll)": "api/runs/1/status",
    "API series": "api/runs/1/series",
    "API tasks": "api/runs/1/tasks",
    "static file (floor)": "static/style.css",
  };
}

/**
 * The store part of benchmark 11: turns/s of 8k-token turns and the file's growth per turn, the dashboard over
 * a million-turn store (built once, cached), and one 50-turn 32k-token trajectory's pages.
 * @example const store = await scaleStore({ quick: false });
 */
export async function scaleStore(options: BenchOptions): Promise<ScaleStoreResult> {
  const dir = mkdtempSync(join(tmpdir(), "air-bench-scale-"));
  try {
    const long: Recorded[] = [];
    const short: Recorded[] = [];
    for (let rep = 0; rep < (options.quick ? 1 : 3); rep++) {
      long.push(await recordSteps(join(dir, `long-${rep}.db`), 8, LONG));
      short.push(await recordSteps(join(dir, `short-${rep}.db`), 48));
      const last = long.at(-1) as Recorded;
      process.stderr.write(`[scale] 8k-token turns: ${fmt(last.turns / (last.ms / 1000))} turns/s\n`);
    }
    const newCharsPerTurn = (LONG.completion?.length ?? 0) + (LONG.observation?.length ?? 0);
    const million = await millionStore();
    const steps = Math.round(million.turns / (MILLION.perStep * MILLION.turns));
    const pages = await timePages(million.path, pagesOf(steps, MILLION.perStep), options.quick ? 5 : 20);
    const hugePath = join(dir, "huge.db");
    await recordSteps(hugePath, 1, HUGE);
    const huge = await timePages(
      hugePath,
      {
        "trajectory page (50 turns, 32k tokens)": "runs/1/trajectories/s0-r0",
        "turns fragment": "runs/1/fragments/turns/s0-r0",
        "facts fragment": "runs/1/fragments/facts/s0-r0",
      },
      options.quick ? 5 : 20,
    );
    return {
      long,
      short,
      newCharsPerTurn,
      million,
      pages,
      huge,
      goals: storeGoals(long, newCharsPerTurn, million, pages, huge),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Benchmark 12: the store and dashboard at internet scale (see `scaleStore`).
 * @example const report = await scaleStoreBenchmark({ quick: false });
 */
export async function scaleStoreBenchmark(options: BenchOptions): Promise<BenchReport> {
  const r = await scaleStore(options);
  return {
    name: "scale-store",
    title: "13. Store and dashboard at scale",
    command: `bun run bench scale-store${options.quick ? " --quick" : ""} --write`,
    tables: storeTables(r),
    goals: r.goals,
    notes: storeNotes(r),
  };
}
