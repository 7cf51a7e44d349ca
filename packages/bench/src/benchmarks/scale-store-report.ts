import type { Table } from "../report.ts";
import { fmt, fmtSpread, quantile, spread } from "../stats.ts";
import type { ScaleStoreResult } from "./scale-store-result.ts";
import { LONG, MILLION } from "./scale-store-shapes.ts";
import type { Recorded } from "./store-record.ts";

export function storeGoals(
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
