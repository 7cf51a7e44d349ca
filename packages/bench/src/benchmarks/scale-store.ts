import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { SearchIndex } from "@air/logger-sqlite/read";
import { serve } from "@air/viz";
import type { BenchReport, Table } from "../report.ts";
import { fmt, fmtSpread, quantile, spread } from "../stats.ts";
import type { BenchOptions } from "./pipeline.ts";
import { type Recorded, recordSteps, type StepShape } from "./store-record.ts";

/** 30 turns to ~7.7k prompt tokens: a 400-character reply and a 600-character observation a turn. */
const LONG: StepShape = {
  perStep: 64,
  turns: 30,
  completion: `DISCUSSION\n${"I will tune the learning rate and validate again. ".repeat(7)}\n\`\`\`\npython train.py\n\`\`\``,
  observation: "epoch 3 | step 120/400 | loss 0.4127 | val_loss 0.4419 | lr 2.0e-04\n".repeat(9),
  promptTokens: (i) => 400 + 253 * i,
};
/** One 50-turn trajectory whose prompt reaches 32k tokens (~2,600 new characters a turn). */
const HUGE: StepShape = {
  perStep: 1,
  turns: 50,
  completion: LONG.completion,
  observation: "epoch 3 | step 120/400 | loss 0.4127 | val_loss 0.4419 | lr 2.0e-04\n".repeat(32),
  promptTokens: (i) => 400 + 650 * i,
};
/** The million-turn store: 100 steps × 1,000 trajectories × 10 turns, ~300-character observations. */
const MILLION: StepShape = {
  perStep: 1000,
  turns: 10,
  observation: "epoch 3 | step 120/400 | loss 0.4127 | val_loss 0.4419\n".repeat(6),
};

export interface ScaleStoreResult {
  long: Recorded[];
  /** Section 5's workload (5-turn trajectories, short prompts), recorded alongside each repeat. */
  short: Recorded[];
  newCharsPerTurn: number;
  million: {
    turns: number;
    path: string;
    cached: boolean;
    buildS?: number;
    turnsPerS?: number;
    /** When the cached store was built and the machine's 1-minute load then (from its `.json` beside it). */
    builtAt?: string;
    load1?: number;
    /** Set when the cached store of an older schema was copied and migrated instead of built again. */
    migratedFrom?: string;
    migrateS?: number;
    /** Seconds this run spent bringing the search index (`<store>.search`) up to date, and rows it indexed. */
    searchS: number;
    searchRows: number;
  };
  pages: Record<string, number[]>;
  huge: Record<string, number[]>;
  goals: string[];
}

/** Where the million-turn store is kept between runs (AIR_BENCH_CACHE, else ~/.cache/air-bench). */
function cacheDir(): string {
  return process.env.AIR_BENCH_CACHE ?? join(homedir(), ".cache", "air-bench");
}

/** A key of the store's schema (its migrations): a store from an older schema is built again. */
function schemaKey(): string {
  const dir = join(import.meta.dir, "../../../logger-sqlite/drizzle");
  const hash = createHash("sha256");
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort())
    hash.update(readFileSync(join(dir, f)));
  return hash.digest("hex").slice(0, 12);
}

/**
 * The million-turn store, built once through the sqlite logger's recorder (the bulk path a run takes: batched
 * WAL transactions of 500 rows) into the cache dir, then reused. AIR_BENCH_SCALE_TURNS scales it down.
 */
async function millionStore(): Promise<ScaleStoreResult["million"]> {
  const turns = Number(process.env.AIR_BENCH_SCALE_TURNS ?? 1_000_000);
  const steps = Math.max(1, Math.round(turns / (MILLION.perStep * MILLION.turns)));
  const dir = cacheDir();
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `store-${steps * MILLION.perStep * MILLION.turns}-${schemaKey()}.db`);
  if (existsSync(path)) {
    const built = existsSync(`${path}.json`) ? JSON.parse(readFileSync(`${path}.json`, "utf8")) : {};
    return {
      ...built,
      ...searchIndex(path),
      turns: steps * MILLION.perStep * MILLION.turns,
      path,
      cached: true,
    };
  }
  const building = `${path}.building`;
  rmSync(building, { force: true });
  const t0 = performance.now();
  const rec = await recordSteps(building, steps, MILLION);
  const buildS = (performance.now() - t0) / 1000;
  const db = new Database(building);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  renameSync(building, path);
  process.stderr.write(`[scale] built ${rec.turns} turns into ${path} in ${fmt(buildS)} s\n`);
  const built = {
    buildS,
    turnsPerS: rec.turns / (rec.ms / 1000),
    builtAt: new Date().toISOString().slice(0, 16).replace("T", " "),
    load1: loadavg()[0],
  };
  writeFileSync(`${path}.json`, JSON.stringify(built));
  return { ...built, ...searchIndex(path), turns: rec.turns, path, cached: false };
}

/**
 * Brings the store's search index up to date before the pages are timed, as the dashboard's worker does in
 * the background (the index is a file beside the cached store, so a later run only checks it).
 */
function searchIndex(path: string): { searchS: number; searchRows: number } {
  const t0 = performance.now();
  const index = SearchIndex.open(path, { write: true });
  if (!index) throw new Error(`cannot write the search index beside ${path}`);
  const store = new Database(path, { readonly: true });
  let rows = 0;
  try {
    for (let n = index.catchUp(store, 5000); n > 0; n = index.catchUp(store, 5000)) rows += n;
  } finally {
    store.close();
    index.close();
  }
  const searchS = (performance.now() - t0) / 1000;
  if (rows > 0) process.stderr.write(`[scale] indexed ${rows} rows for search in ${fmt(searchS)} s\n`);
  return { searchS, searchRows: rows };
}

async function getTimed(url: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return performance.now() - t0;
}

/** p-samples of each page, interleaved; a page slower than 2 s is sampled 3 times only. */
async function timePages(dbPath: string, paths: Record<string, string>, n: number) {
  const server = serve({ dbPath, port: 0 });
  const out: Record<string, number[]> = {};
  try {
    const slow = new Set<string>();
    for (const [label, p] of Object.entries(paths)) {
      const ms = await getTimed(`${server.url}${p}`);
      if (ms > 2000) slow.add(label);
    }
    for (let i = 0; i < n; i++) {
      for (const [label, p] of Object.entries(paths)) {
        if (slow.has(label) && i >= 3) continue;
        out[label] = [...(out[label] ?? []), await getTimed(`${server.url}${p}`)];
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

function storeGoals(
  long: Recorded[],
  newChars: number,
  million: ScaleStoreResult["million"],
  pages: Record<string, number[]>,
  huge: Record<string, number[]>,
): string[] {
  const rate = spread(long.map((r) => r.turns / (r.ms / 1000))).median;
  const cpuRate = spread(long.map((r) => r.turns / (r.cpuMs / 1000))).median;
  const bytes = spread(long.map((r) => r.bytesPerTurn)).median;
  const worst = Object.entries(pages)
    .filter(([k]) => !k.startsWith("static"))
    .map(([k, v]) => [k, quantile(v, 0.95)] as const)
    .sort((a, b) => b[1] - a[1])[0];
  const hugeP95 = quantile(huge["trajectory page (50 turns, 32k tokens)"] ?? [], 0.95);
  const verdict = (ok: boolean) => (ok ? "met" : "missed");
  return [
    `store records ≥ 20k turns/s of 8k-token turns: **${fmt(rate)}** — ${verdict(rate >= 20_000)} ` +
      `(${fmt(cpuRate)} turns per CPU-second of the recording process: what one core does when no other work shares it)`,
    `store file grows with what is new in each turn: **${fmt(bytes)} bytes per turn** for ${newChars} new ` +
      `characters (${fmt(bytes / newChars)}×)`,
    `dashboard p95 ≤ 50 ms on every page at ${fmt(million.turns)} turns (worst: ${worst?.[0]}): ` +
      `**${fmt(worst?.[1] ?? Number.NaN)} ms** — ${verdict((worst?.[1] ?? Number.POSITIVE_INFINITY) <= 50)}`,
    `one 50-turn 32k-token trajectory page p95 ≤ 100 ms: **${fmt(hugeP95)} ms** — ${verdict(hugeP95 <= 100)}`,
  ];
}

/** The store tables of benchmark 12. */
export function storeTables(r: ScaleStoreResult): Table[] {
  const perS = (x: Recorded) => x.turns / (x.ms / 1000);
  const perCpuS = (x: Recorded) => x.turns / (x.cpuMs / 1000);
  const pageRows = (pages: Record<string, number[]>) =>
    Object.entries(pages).map(([k, v]) => [
      k,
      String(v.length),
      fmt(quantile(v, 0.5)),
      fmt(quantile(v, 0.95)),
      fmt(Math.max(...v)),
    ]);
  return [
    {
      title: `Store: 8k-token turns (${LONG.perStep} trajectories × ${LONG.turns} turns × 8 steps per repeat, fresh file each)`,
      headers: [
        "workload",
        "repeats",
        "turns/s",
        "turns per CPU-second",
        "bytes per turn (file)",
        "new characters per turn",
        "row writes per turn",
      ],
      rows: [
        [
          "8k-token turns, 30 per trajectory",
          String(r.long.length),
          fmtSpread(spread(r.long.map(perS))),
          fmtSpread(spread(r.long.map(perCpuS))),
          fmtSpread(spread(r.long.map((x) => x.bytesPerTurn))),
          String(r.newCharsPerTurn),
          fmtSpread(spread(r.long.map((x) => x.rowWritesPerTurn))),
        ],
        [
          "section 5's turns (5 per trajectory, ~500 tokens), alongside",
          String(r.short.length),
          fmtSpread(spread(r.short.map(perS))),
          fmtSpread(spread(r.short.map(perCpuS))),
          fmtSpread(spread(r.short.map((x) => x.bytesPerTurn))),
          "~1,160",
          fmtSpread(spread(r.short.map((x) => x.rowWritesPerTurn))),
        ],
        [
          "8k ÷ section 5's (paired)",
          String(r.long.length),
          fmtSpread(spread(r.long.map((x, i) => perS(x) / perS(r.short[i] ?? x)))),
          fmtSpread(spread(r.long.map((x, i) => perCpuS(x) / perCpuS(r.short[i] ?? x)))),
          "",
          "",
          "",
        ],
      ],
    },
    {
      title: `Dashboard over ${fmt(r.million.turns)} turns (${fmt(r.million.turns / MILLION.turns)} trajectories), real HTTP, pages interleaved`,
      headers: ["page", "n", "p50 ms", "p95 ms", "max ms"],
      rows: pageRows(r.pages),
    },
    {
      title: "One 50-turn trajectory whose prompt reaches 32k tokens",
      headers: ["page", "n", "p50 ms", "p95 ms", "max ms"],
      rows: pageRows(r.huge),
    },
  ];
}

const HOW =
  "How the pages stay O(steps) at a million turns: the charts (`/api/runs/1/series`) and the tasks page read " +
  "`step_totals` (per run, step, split and task: counts, sums, the best improvement, turn errors) and " +
  "`step_advantages` (each ended step's advantage percentiles 0…100), which SQLite triggers keep as rows are " +
  "written (migration 0005, which also fills them for an older store); a search asks the FTS5 trigram index " +
  "beside the store (`<store>.search`, built and kept caught up by a dashboard worker thread, not by the " +
  "logger) for its candidate rows and checks them with LIKE, and a term in more than 5,000 turns scans in " +
  "list order as before (its first page is found in the first rows). Indexes by group, reward, improvement " +
  "and final score serve the group pages and sorted lists; the task filter is an index skip-scan; live " +
  "status polls count only rows added since the stream's last poll.";

/** The store notes of benchmark 12. */
export function storeNotes(r: ScaleStoreResult): string[] {
  const how =
    r.million.buildS === undefined
      ? ""
      : ` in ${fmt(r.million.buildS)} s (${fmt(r.million.turnsPerS ?? Number.NaN)} turns/s through the recorder` +
        `${r.million.builtAt ? `, ${r.million.builtAt} UTC` : ""}` +
        `${r.million.load1 === undefined ? "" : `, load average ${fmt(r.million.load1)}`})`;
  const migrated = r.million.migratedFrom
    ? `; copied from the cached store of the previous schema (${r.million.migratedFrom}) and migrated in ${fmt(r.million.migrateS ?? Number.NaN)} s`
    : "";
  const built = r.million.cached
    ? `reused from the cache (${r.million.path}), built once by an earlier run${how}${migrated}`
    : `built by this run${how} into ${r.million.path}`;
  const search =
    r.million.searchRows > 0
      ? `This run built its search index: ${fmt(r.million.searchRows)} turn and trajectory rows in ${fmt(r.million.searchS)} s.`
      : `Its search index was already up to date (checked in ${fmt(r.million.searchS * 1000)} ms).`;
  return [
    `The million-turn store: ${built}. It is written through the sqlite logger's own recorder on an event bus ` +
      "(batched WAL transactions), the path a run takes, and kept under AIR_BENCH_CACHE (default " +
      `~/.cache/air-bench) keyed by the store's migrations, so a schema change builds it again. ${search}`,
    HOW,
  ];
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
