import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir, loadavg } from "node:os";
import { join } from "node:path";
import { SearchIndex } from "@air/logger-sqlite/read";
import { fmt } from "../stats.ts";
import type { ScaleStoreResult } from "./scale-store-result.ts";
import { MILLION } from "./scale-store-shapes.ts";
import { recordSteps } from "./store-record.ts";

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
export async function millionStore(): Promise<ScaleStoreResult["million"]> {
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
