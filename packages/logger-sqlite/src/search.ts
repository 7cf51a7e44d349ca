import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";

/**
 * The search index beside a run store (`<store>.search`): SQLite FTS5 trigram indexes (contentless,
 * detail=none) of each turn's reply, command and observation (keyed by the turn's rowid) and of each
 * trajectory's rollout id, task and example id (keyed by its id). The dashboard builds and extends it
 * (`catchUp`), not the logger, so recording turns costs nothing more. A search asks the index which rows hold
 * every trigram of the term — a superset of the rows whose text contains it — and checks those rows with LIKE,
 * so it finds exactly what a LIKE scan finds; rows past the index's watermark are scanned with LIKE.
 */
export const SEARCH_SUFFIX = ".search";

/** Rows past the watermarks (not indexed yet) and the candidates of a term: what a search then checks with LIKE. */
export interface SearchHits {
  /** Turn rowids whose text holds every trigram of the term (≤ the turns watermark). */
  turnRowids: number[];
  /** Trajectory ids whose ids/task/example hold every trigram of the term (≤ the trajectories watermark). */
  trajectoryIds: number[];
  /** Turns with a rowid above this, and trajectories with an id above `trajectoriesAfter`, are not indexed yet. */
  turnsAfter: number;
  trajectoriesAfter: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value);
CREATE VIRTUAL TABLE IF NOT EXISTS turn_text USING fts5(text, content='', tokenize='trigram case_sensitive 0', detail=none);
CREATE VIRTUAL TABLE IF NOT EXISTS trajectory_text USING fts5(text, content='', tokenize='trigram case_sensitive 0', detail=none);
`;

const TABLES = ["meta", "turn_text", "trajectory_text"];

/** Whether every table of the index is there (committed by the writer that created the file). */
function hasSchema(db: Database): boolean {
  const names = db
    .query(`SELECT name FROM sqlite_master WHERE name IN (${TABLES.map(() => "?").join(", ")})`)
    .all(...TABLES) as Array<{ name: string }>;
  return names.length === TABLES.length;
}

/** What identifies the turn row at the watermark: if it changes, rowids were reused and the index starts over. */
const SIGNATURE = `rollout_id || ':' || idx || ':' || length(completion) || ':' || length(observation) || ':' || substr(completion, -32)`;

/**
 * `"abc" AND "bcd" AND …`: an FTS5 query for the rows holding every trigram of `term`, or null for a term of
 * fewer than 3 characters (no trigram: such a search scans).
 * @example trigramQuery("gbm!") // '"gbm" AND "bm!"'
 */
export function trigramQuery(term: string): string | null {
  const chars = Array.from(term);
  if (chars.length < 3) return null;
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) grams.add(chars.slice(i, i + 3).join(""));
  return [...grams].map((g) => `"${g.replaceAll('"', '""')}"`).join(" AND ");
}

/**
 * One store's search index file.
 * @example
 * const index = SearchIndex.open("outputs/run/air.db", { write: true });
 * while (index?.catchUp(store) ?? 0) {}
 * index?.hits("val_loss", 5000);
 */
export class SearchIndex {
  private constructor(private readonly db: Database) {}

  /**
   * Opens the index of `storePath`: `write` creates it (null when the store's folder is not writable); a
   * reader gets null until the index exists with its tables (the writer creates them in one transaction).
   */
  static open(storePath: string, options: { write?: boolean } = {}): SearchIndex | null {
    const path = storePath + SEARCH_SUFFIX;
    let db: Database | undefined;
    try {
      if (!options.write) {
        if (!existsSync(path)) return null;
        db = new Database(path, { readonly: true });
        db.exec("PRAGMA busy_timeout = 2000");
        // The file exists from the moment the dashboard's worker creates it, its tables only once that worker's
        // first transaction commits: until then a reader has no index (a search scans).
        if (!hasSchema(db)) {
          db.close();
          return null;
        }
        return new SearchIndex(db);
      }
      db = new Database(path, { create: true, readwrite: true });
      db.exec("PRAGMA busy_timeout = 2000");
      db.exec("PRAGMA journal_mode = WAL");
      db.exec("PRAGMA synchronous = NORMAL");
      const created = db;
      created.transaction(() => created.exec(SCHEMA)).immediate();
      return new SearchIndex(db);
    } catch {
      db?.close();
      return null;
    }
  }

  private meta(key: string): number | string | null {
    const row = this.db.query("SELECT value FROM meta WHERE key = ?").get(key) as {
      value: number | string;
    } | null;
    return row?.value ?? null;
  }

  private setMeta(key: string, value: number | string): void {
    this.db
      .query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT DO UPDATE SET value = excluded.value")
      .run(key, value);
  }

  /** The highest turn rowid and trajectory id indexed so far. */
  watermarks(): { turns: number; trajectories: number } {
    return { turns: Number(this.meta("turns") ?? 0), trajectories: Number(this.meta("trajectories") ?? 0) };
  }

  /**
   * Indexes up to `limit` turns and `limit` trajectories written since the last call (one transaction) and
   * returns how many rows it indexed: 0 when caught up. `store` is the run store's own (read-only) connection.
   */
  catchUp(store: Database, limit = 2000): number {
    // IMMEDIATE: a second dashboard on the same store waits here instead of indexing the same rows twice.
    return this.db.transaction(() => this.catchUpNow(store, limit)).immediate();
  }

  private catchUpNow(store: Database, limit: number): number {
    const marks = this.watermarks();
    const signature = this.meta("signature");
    if (marks.turns > 0) {
      const row = store.query(`SELECT ${SIGNATURE} AS s FROM turns WHERE rowid = ?`).get(marks.turns) as {
        s: string;
      } | null;
      if (row?.s !== signature) {
        // Turns at the top were deleted (a retried or resumed rollout) and their rowids reused: start over.
        this.db.exec(
          "INSERT INTO turn_text(turn_text) VALUES ('delete-all'); DELETE FROM meta WHERE key IN ('turns', 'signature')",
        );
        marks.turns = 0;
      }
    }
    const turns = store
      .query(
        `SELECT rowid AS id, completion || char(10) || coalesce(command, '') || char(10) || observation AS text, ${SIGNATURE} AS s
         FROM turns WHERE rowid > ? ORDER BY rowid LIMIT ?`,
      )
      .all(marks.turns, limit) as Array<{ id: number; text: string; s: string }>;
    const trajectories = store
      .query(
        `SELECT id, rollout_id || char(10) || task || char(10) || example_id AS text FROM trajectories
         WHERE id > ? ORDER BY id LIMIT ?`,
      )
      .all(marks.trajectories, limit) as Array<{ id: number; text: string }>;
    if (turns.length === 0 && trajectories.length === 0) return 0;
    const addTurn = this.db.prepare("INSERT INTO turn_text (rowid, text) VALUES (?, ?)");
    const addTrajectory = this.db.prepare("INSERT INTO trajectory_text (rowid, text) VALUES (?, ?)");
    for (const t of turns) addTurn.run(t.id, t.text);
    for (const t of trajectories) addTrajectory.run(t.id, t.text);
    const lastTurn = turns.at(-1);
    if (lastTurn) {
      this.setMeta("turns", lastTurn.id);
      this.setMeta("signature", lastTurn.s);
    }
    const lastTrajectory = trajectories.at(-1);
    if (lastTrajectory) this.setMeta("trajectories", lastTrajectory.id);
    return turns.length + trajectories.length;
  }

  /**
   * The indexed rows that may hold `term` (every trigram of it), or null when the term is shorter than 3
   * characters or more than `cap` turns or trajectories may hold it (a common term: a scan in list order finds
   * its first page sooner).
   */
  hits(term: string, cap: number): SearchHits | null {
    const query = trigramQuery(term);
    if (query === null) return null;
    // One read transaction: the watermarks and the index as of the same moment (the dashboard's worker writes).
    return this.db.transaction(() => this.hitsNow(query, cap))();
  }

  private hitsNow(query: string, cap: number): SearchHits | null {
    const marks = this.watermarks();
    const ids = (table: string) =>
      (
        this.db
          .query(`SELECT rowid AS id FROM ${table} WHERE ${table} MATCH ? LIMIT ?`)
          .all(query, cap + 1) as Array<{
          id: number;
        }>
      ).map((r) => r.id);
    const turnRowids = ids("turn_text");
    if (turnRowids.length > cap) return null;
    const trajectoryIds = ids("trajectory_text");
    if (trajectoryIds.length > cap) return null;
    return { turnRowids, trajectoryIds, turnsAfter: marks.turns, trajectoriesAfter: marks.trajectories };
  }

  close(): void {
    this.db.close();
  }
}
