import type { StoreDb } from "./open.ts";

/** One finding of `bun run audit`, as stored. */
export interface AuditRow {
  /** The config file audited. */
  config: string;
  task: string;
  probe: string;
  /** "baseline" | "trivial" | "cheat" | "metric". */
  group: string;
  /** "held" | "broken" | "ok" | "flagged" | "warn" | "n/a" | "error". */
  verdict: string;
  critical: boolean;
  score?: number;
  evidence: string;
  /** Milliseconds since the epoch; one value for every row of an audit. */
  createdAt: number;
}

/**
 * The `audits` table, created on first use (`CREATE TABLE IF NOT EXISTS`, idempotent): it lives outside the
 * drizzle schema and its migration journal, so stores from before it and readers that do not know it are
 * unaffected.
 */
export const AUDITS_DDL = `CREATE TABLE IF NOT EXISTS audits (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at INTEGER NOT NULL,
  config TEXT NOT NULL,
  task TEXT NOT NULL,
  probe TEXT NOT NULL,
  "group" TEXT NOT NULL,
  verdict TEXT NOT NULL,
  critical INTEGER NOT NULL,
  score REAL,
  evidence TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audits_task ON audits (task, created_at);`;

/**
 * Stores the findings of one audit in one transaction (creating the table when the store has none).
 * @example recordAudits(openStore("outputs/run/air.db"), [{ config: "c.toml", task: "titanicSurvival", probe: "sample submission", group: "trivial", verdict: "flagged", critical: true, score: 1, evidence: "…", createdAt: Date.now() }]);
 */
export function recordAudits(db: StoreDb, rows: AuditRow[]): void {
  const client = db.$client;
  client.exec(AUDITS_DDL);
  const insert = client.prepare(
    `INSERT INTO audits (created_at, config, task, probe, "group", verdict, critical, score, evidence)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  client.transaction(() => {
    for (const r of rows)
      insert.run(
        r.createdAt,
        r.config,
        r.task,
        r.probe,
        r.group,
        r.verdict,
        r.critical ? 1 : 0,
        r.score ?? null,
        r.evidence,
      );
  })();
}

/**
 * The rows of the latest audit of each task (newest `created_at` per task), or [] when the store has no audits.
 * @example readLatestAudits(openStore("outputs/run/air.db", { readonly: true }))
 */
export function readLatestAudits(db: StoreDb): AuditRow[] {
  const client = db.$client;
  const exists = client
    .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'audits'")
    .get();
  if (!exists) return [];
  const rows = client
    .query(
      `SELECT a.created_at, a.config, a.task, a.probe, a."group", a.verdict, a.critical, a.score, a.evidence
       FROM audits a JOIN (SELECT task, max(created_at) AS at FROM audits GROUP BY task) l
       ON a.task = l.task AND a.created_at = l.at ORDER BY a.task, a.id`,
    )
    .all() as Array<Record<string, unknown>>;
  return rows.map((r) => ({
    createdAt: Number(r.created_at),
    config: String(r.config),
    task: String(r.task),
    probe: String(r.probe),
    group: String(r.group),
    verdict: String(r.verdict),
    critical: Number(r.critical) === 1,
    score: r.score === null ? undefined : Number(r.score),
    evidence: String(r.evidence),
  }));
}
