import type { Database, SQLQueryBindings } from "bun:sqlite";
import { Column, getTableColumns, is, Param, Placeholder, type Query, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/** The insert-side property names of a table's columns (`runId`, not `run_id`). */
export type ColumnKey<T extends SQLiteTable> = keyof T["$inferInsert"] & string;

/** A row for a statement over `keys` of `T`: every key present (null where the column is empty). */
export type WriteRow<T extends SQLiteTable, K extends ColumnKey<T>> = { [P in K]-?: T["$inferInsert"][P] };

/** One placeholder per key, for `values(...)` and `where(...)`; `set` takes `assign(p, keys)`. */
export type Placeholders<K extends string> = { [P in K]: Placeholder<string> };

/**
 * Every column key of `table`, in schema order.
 * @example columnKeys(turns) // ["runId", "rolloutId", "idx", ...]
 */
export function columnKeys<T extends SQLiteTable>(table: T): Array<ColumnKey<T>> {
  // getTableColumns returns exactly T's columns keyed by their property names; Object.keys only widens the type.
  return Object.keys(getTableColumns(table)) as Array<ColumnKey<T>>;
}

/**
 * `{ key: sql.placeholder(key) }` for each key.
 * @example db.insert(metrics).values(placeholders(["runId", "step", "name", "value"]))
 */
export function placeholders<K extends string>(keys: readonly K[]): Placeholders<K> {
  const out: Partial<Record<K, Placeholder<K>>> = {};
  for (const k of keys) out[k] = sql.placeholder(k);
  return out as Placeholders<K>;
}

/**
 * The `set` of an UPDATE that assigns each of `keys` from its placeholder.
 * @example db.update(runs).set(assign(p, ["status", "endedAt"]))
 */
export function assign<K extends string>(p: Placeholders<K>, keys: readonly K[]): Record<K, SQL> {
  const out: Partial<Record<K, SQL>> = {};
  for (const k of keys) out[k] = sql`${p[k]}`;
  return out as Record<K, SQL>;
}

/**
 * Compiles a write built with drizzle (typed against the schema) into one bun:sqlite statement, prepared
 * once and bound by position on every call. Drizzle's own prepared queries resolve each placeholder by name
 * with entity checks on every run (about 15% of the recorder's time in a CPU profile of `bun run bench store`).
 * Every placeholder of the query must be one of `keys`; constants drizzle adds (column defaults) are bound as
 * they are, and column encoders (boolean mode) still apply.
 * @example
 * const insertMetric = compileWrite(db.$client, metrics, ["runId", "step", "name", "value"], (p) =>
 *   db.insert(metrics).values(p),
 * );
 * insertMetric({ runId: 1, step: 0, name: "loss", value: 0.5 });
 */
export function compileWrite<T extends SQLiteTable, K extends ColumnKey<T>>(
  client: Database,
  _table: T,
  keys: readonly K[],
  build: (p: Placeholders<K>) => { toSQL(): Query },
): (row: WriteRow<T, K>) => void {
  const names = new Map(keys.map((key) => [key as string, { row: 0, key }]));
  const run = compileRows(client, build(placeholders(keys)), names);
  return (row) => run([row]);
}

/**
 * Like `compileWrite` for a multi-row INSERT: rows go in statements of up to `chunk` rows (one statement per
 * chunk size, compiled on first use). One statement per chunk instead of one per row saves SQLite's
 * per-statement work, e.g. the `sqlite_sequence` update of an AUTOINCREMENT table.
 * @example
 * const insertSamples = compileInsertMany(db.$client, samples, keys, 64, (rows) => db.insert(samples).values(rows));
 * insertSamples(batch.samples.map((s) => sampleRow(runId, step, s)));
 */
export function compileInsertMany<T extends SQLiteTable, K extends ColumnKey<T>>(
  client: Database,
  _table: T,
  keys: readonly K[],
  chunk: number,
  build: (rows: Array<Placeholders<K>>) => { toSQL(): Query },
): (rows: ReadonlyArray<WriteRow<T, K>>) => void {
  const bySize = new Map<number, (rows: ReadonlyArray<WriteRow<T, K>>) => void>();
  const statement = (size: number) => {
    let run = bySize.get(size);
    if (!run) {
      const names = new Map<string, { row: number; key: K }>();
      const rows = Array.from({ length: size }, (_, row) => {
        const named = placeholders(keys.map((key) => `${row}:${key}`));
        const out: Partial<Placeholders<K>> = {};
        for (const key of keys) {
          const name = `${row}:${key}`;
          names.set(name, { row, key });
          out[key] = named[name];
        }
        return out as Placeholders<K>;
      });
      run = compileRows(client, build(rows), names);
      bySize.set(size, run);
    }
    return run;
  };
  return (rows) => {
    for (let i = 0; i < rows.length; i += chunk) {
      const part = rows.slice(i, i + chunk);
      statement(part.length)(part);
    }
  };
}

/** A slot is a placeholder bound from one of the rows, or a constant drizzle put in the query (a default). */
type Slot<K> = { row: number; key: K; encode?: (value: unknown) => unknown } | { constant: SQLQueryBindings };

function compileRows<K extends string, R extends Record<K, unknown>>(
  client: Database,
  query: { toSQL(): Query },
  names: Map<string, { row: number; key: K }>,
): (rows: ReadonlyArray<R>) => void {
  const { sql: text, params } = query.toSQL();
  const slots = params.map((param): Slot<K> => {
    const holder = is(param, Param) ? param.value : param;
    if (!is(holder, Placeholder)) {
      const value = is(param, Param) && holder !== null ? param.encoder.mapToDriverValue(holder) : holder;
      return { constant: binding(value) };
    }
    const target = names.get(holder.name);
    if (target === undefined)
      throw new Error(
        `compileWrite: placeholder "${holder.name}" is not one of [${[...names.keys()]}]: ${text}`,
      );
    // Most columns keep drizzle's identity mapping; only the others (boolean mode) need their encoder.
    const encoder = is(param, Param) ? param.encoder : undefined;
    if (!encoder || encoder.mapToDriverValue === Column.prototype.mapToDriverValue) return target;
    return { ...target, encode: (value) => encoder.mapToDriverValue(value) };
  });
  const statement = client.prepare(text);
  const args: SQLQueryBindings[] = new Array(slots.length);
  return (rows) => {
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if ("constant" in slot) {
        args[i] = slot.constant;
        continue;
      }
      const value: unknown = rows[slot.row]?.[slot.key];
      args[i] = binding(value === undefined || value === null || !slot.encode ? value : slot.encode(value));
    }
    statement.run(...args);
  };
}

function binding(value: unknown): SQLQueryBindings {
  if (value === undefined || value === null) return null;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  if (typeof value === "bigint" || value instanceof Uint8Array) return value;
  throw new TypeError(`compileWrite: cannot bind a ${typeof value} to SQLite`);
}
