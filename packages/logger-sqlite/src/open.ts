import { Database } from "bun:sqlite";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { schema } from "./schema.ts";

/** A drizzle handle over one store file, with the raw bun:sqlite client beside it. */
export type StoreDb = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** Folder of the SQL migrations drizzle-kit generated from schema.ts. */
export const MIGRATIONS_DIR = resolve(import.meta.dir, "../drizzle");

export interface OpenStoreOptions {
  /** Open read-only (the dashboard); no migration runs and the file must exist. */
  readonly?: boolean;
  /** SQLite `synchronous` for writers: NORMAL survives a killed process, FULL also a power cut. */
  synchronous?: "NORMAL" | "FULL";
  busyTimeoutMs?: number;
}

/**
 * Opens (and for writers creates and migrates) a run store in WAL mode.
 * @example
 * const db = openStore("outputs/run/air.db");
 * const runs = db.select().from(schema.runs).all();
 */
export function openStore(path: string, options: OpenStoreOptions = {}): StoreDb {
  const busy = options.busyTimeoutMs ?? 5000;
  if (options.readonly) {
    if (!existsSync(path)) throw new Error(`no run store at ${path}`);
    migrateOlderStore(path, busy);
    const client = new Database(path, { readonly: true });
    client.exec(`PRAGMA busy_timeout = ${busy}`);
    const db = drizzle({ client, schema });
    const known = client
      .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'trajectories'")
      .get();
    if (!known) {
      client.close();
      throw new Error(`${path} is not an air run store (no trajectories table)`);
    }
    return db;
  }
  mkdirSync(dirname(resolve(path)), { recursive: true });
  const client = new Database(path, { create: true, readwrite: true });
  client.exec(`PRAGMA busy_timeout = ${busy}`);
  client.exec("PRAGMA journal_mode = WAL");
  client.exec(`PRAGMA synchronous = ${options.synchronous ?? "NORMAL"}`);
  // Statement journals in memory: a write that fires the step_totals triggers (migration 0005) needs one per
  // statement, and as temp files they cost syscalls on every turn (measured: 2.4× the CPU of a 5-turn
  // trajectory's writes, against 1.25× in memory).
  client.exec("PRAGMA temp_store = MEMORY");
  const db = drizzle({ client, schema });
  migrate(db, { migrationsFolder: MIGRATIONS_DIR });
  return db;
}

/**
 * A reader of a store written by an older air (a migration missing, e.g. a column the read API selects)
 * migrates it first through a short read-write connection; adding columns leaves a writer still running on it
 * unaffected. A store that cannot be opened for writing is reported rather than shown half-broken.
 */
function migrateOlderStore(path: string, busyMs: number): void {
  const latest = Math.max(
    ...readMigrationFiles({ migrationsFolder: MIGRATIONS_DIR }).map((m) => m.folderMillis),
  );
  const reader = new Database(path, { readonly: true });
  let applied: number | null;
  try {
    const table = reader
      .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'")
      .get();
    if (!table) return;
    const row = reader.query("SELECT max(created_at) AS at FROM __drizzle_migrations").get();
    applied = row && typeof row === "object" && "at" in row ? Number(row.at) : null;
  } finally {
    reader.close();
  }
  if (applied !== null && applied >= latest) return;
  let client: Database;
  try {
    client = new Database(path, { readwrite: true });
  } catch (error) {
    throw new Error(
      `${path} was written by an older air and needs a schema migration, but cannot be opened for writing: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  try {
    client.exec(`PRAGMA busy_timeout = ${busyMs}`);
    client.exec("PRAGMA temp_store = MEMORY");
    migrate(drizzle({ client, schema }), { migrationsFolder: MIGRATIONS_DIR });
  } finally {
    client.close();
  }
}
