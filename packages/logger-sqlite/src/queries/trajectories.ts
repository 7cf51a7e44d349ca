import { and, count, desc, eq, exists, or, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { StoreDb } from "../open.ts";
import { trajectories, turns } from "../schema.ts";
import type { SearchHits, SearchIndex } from "../search.ts";

/** Which trajectories of a run to list, and how (the dashboard's list filters). */
export interface TrajectoryFilter {
  /** 1-based page of `per` rows. */
  page: number;
  per: number;
  task?: string;
  step?: number;
  status?: "running" | "done" | "failed";
  /** "train": rollouts trained on; "eval": a periodic evaluation's rollouts. */
  split?: "train" | "eval";
  /** "yes": validated at least once; "no": never. */
  validated?: "yes" | "no";
  /** Substring of the ids, task, example, error, or any turn's reply, command or observation. */
  q?: string;
  /** "yes": only trajectories with a turn the env flagged as tampering (a non-empty `info.tamper`). */
  flagged?: "yes";
  sort: "step" | "reward" | "improvement" | "final_score";
}

const SORT_COLUMNS: Record<Exclude<TrajectoryFilter["sort"], "step">, SQLiteColumn> = {
  reward: trajectories.reward,
  improvement: trajectories.improvement,
  final_score: trajectories.finalScore,
};

/** `column LIKE pattern ESCAPE '\'` (drizzle's `like` has no ESCAPE clause). */
const likeEscaped = (column: SQLiteColumn, pattern: string): SQL =>
  sql`${column} LIKE ${pattern} ESCAPE '\\'`;

/**
 * A turn the env flagged as tampering (`info.tamper` non-empty): the WHERE of the partial index
 * `turns_run_flagged` (schema.ts), written the same way so SQLite reads that index, never every turn's JSON.
 */
const FLAGGED_TURN = sql`json_valid(${turns.infoJson}) AND json_array_length(${turns.infoJson}, '$.tamper') > 0`;

/** The turns of the outer trajectory row that the env flagged (through the partial index). */
const flaggedTurnsOf = (db: StoreDb) =>
  db.$count(
    turns,
    and(eq(turns.runId, trajectories.runId), eq(turns.rolloutId, trajectories.rolloutId), FLAGGED_TURN),
  );

/**
 * Ids of the run's trajectories with a flagged turn: the partial index `turns_run_flagged`'s rows of the run
 * drive it (O(flagged turns); the test reads its query plan).
 */
export const flaggedTrajectoryIds = (runId: number): SQL =>
  sql`SELECT t.id FROM turns u JOIN trajectories t ON t.run_id = u.run_id AND t.rollout_id = u.rollout_id WHERE u.run_id = ${runId} AND json_valid(u.info_json) AND json_array_length(u.info_json, '$.tamper') > 0`;

/** The trajectory's own text or any of its turns' holds the pattern: a scan in list order (no index). */
function scannedMatch(db: StoreDb, pattern: string): SQL | undefined {
  const inTurns = db
    .select({ one: sql`1` })
    .from(turns)
    .where(
      and(
        eq(turns.runId, trajectories.runId),
        eq(turns.rolloutId, trajectories.rolloutId),
        or(
          likeEscaped(turns.completion, pattern),
          likeEscaped(turns.command, pattern),
          likeEscaped(turns.observation, pattern),
        ),
      ),
    );
  return or(
    likeEscaped(trajectories.rolloutId, pattern),
    likeEscaped(trajectories.task, pattern),
    likeEscaped(trajectories.exampleId, pattern),
    likeEscaped(trajectories.error, pattern),
    exists(inTurns),
  );
}

/**
 * The same match through the search index (`SearchIndex.hits`): the index's candidates and the rows past its
 * watermarks, each checked with LIKE, and errors through their partial index — O(candidates), not O(rows).
 */
function indexedMatch(runId: number, pattern: string, hits: SearchHits): SQL {
  const like = (column: string) => sql`${sql.raw(column)} LIKE ${pattern} ESCAPE '\\'`;
  const own = sql`(${like("rollout_id")} OR ${like("task")} OR ${like("example_id")})`;
  const text = sql`(${like("u.completion")} OR ${like("u.command")} OR ${like("u.observation")})`;
  const turnsOf = sql`SELECT t.id FROM turns u JOIN trajectories t ON t.run_id = u.run_id AND t.rollout_id = u.rollout_id`;
  // `+run_id` keeps SQLite off the (run_id, …) indexes here: each part is driven by its ids or rowid range.
  return sql`${trajectories.id} IN (
    SELECT id FROM trajectories WHERE id IN (SELECT value FROM json_each(${JSON.stringify(hits.trajectoryIds)})) AND +run_id = ${runId} AND ${own}
    UNION SELECT id FROM trajectories WHERE id > ${hits.trajectoriesAfter} AND +run_id = ${runId} AND ${own}
    UNION SELECT id FROM trajectories WHERE run_id = ${runId} AND error IS NOT NULL AND ${like("error")}
    UNION ${turnsOf} WHERE u.rowid IN (SELECT value FROM json_each(${JSON.stringify(hits.turnRowids)})) AND +u.run_id = ${runId} AND ${text}
    UNION ${turnsOf} WHERE u.rowid > ${hits.turnsAfter} AND +u.run_id = ${runId} AND ${text})`;
}

function conditions(
  db: StoreDb,
  runId: number,
  f: TrajectoryFilter,
  hits?: SearchHits | null,
): SQL | undefined {
  // With the index's hits, or the flagged turns, the matched ids drive the query (`+run_id`: not a (run_id, …)
  // index scan).
  const where: Array<SQL | undefined> = [
    hits || f.flagged === "yes" ? sql`+${trajectories.runId} = ${runId}` : eq(trajectories.runId, runId),
  ];
  if (f.task) where.push(eq(trajectories.task, f.task));
  if (f.step !== undefined) where.push(eq(trajectories.step, f.step));
  if (f.status) where.push(eq(trajectories.status, f.status));
  if (f.split) where.push(eq(trajectories.split, f.split));
  if (f.validated)
    where.push(
      f.validated === "yes"
        ? eq(trajectories.validated, true)
        : sql`coalesce(${trajectories.validated}, 0) = 0`,
    );
  // (`+run_id` above: SQLite then does not walk a (run_id, …) index of every trajectory instead.)
  if (f.flagged === "yes") where.push(sql`${trajectories.id} IN (${flaggedTrajectoryIds(runId)})`);
  if (f.q) {
    const pattern = `%${f.q.replace(/[%_\\]/g, (m) => `\\${m}`)}%`;
    where.push(hits ? indexedMatch(runId, pattern, hits) : scannedMatch(db, pattern));
  }
  return and(...where);
}

/**
 * One page of a run's trajectories, filtered and searched, with the total count and the run's tasks. A running
 * trajectory's `turnCount` counts its stored turns.
 * LIMIT/OFFSET over indexed columns, so 10k rollouts page quickly.
 * @example const { rows, total, pages } = listTrajectories(db, 1, { page: 1, per: 50, sort: "step", task: "titanic" });
 */
export function listTrajectories(
  db: StoreDb,
  runId: number,
  filter: TrajectoryFilter,
  index?: SearchIndex | null,
) {
  const hits = filter.q && index ? index.hits(filter.q, SEARCH_INDEX_CAP) : null;
  const where = conditions(db, runId, filter, hits);
  // The recorder writes turn_count when a rollout ends; a running one shows the turns stored so far.
  const storedTurns = db.$count(
    turns,
    and(eq(turns.runId, trajectories.runId), eq(turns.rolloutId, trajectories.rolloutId)),
  );
  const liveTurnCount = sql<number>`CASE WHEN ${trajectories.status} = 'running' THEN ${storedTurns} ELSE ${trajectories.turnCount} END`;
  // SQLite sorts NULL lowest, so DESC puts unscored rows last and the (run_id, column) index serves the order.
  const order =
    filter.sort === "step"
      ? [desc(trajectories.step), desc(trajectories.id)]
      : [desc(SORT_COLUMNS[filter.sort]), desc(trajectories.id)];
  // A search reads turn text (no index): its count stops at SEARCH_COUNT_LIMIT matches instead of reading all.
  const total = filter.q
    ? countUpTo(db, where, SEARCH_COUNT_LIMIT)
    : (db.select({ n: count() }).from(trajectories).where(where).get()?.n ?? 0);
  const rows = db
    .select({
      rolloutId: trajectories.rolloutId,
      step: trajectories.step,
      split: trajectories.split,
      task: trajectories.task,
      exampleId: trajectories.exampleId,
      groupId: trajectories.groupId,
      status: trajectories.status,
      stopReason: trajectories.stopReason,
      reward: trajectories.reward,
      finalScore: trajectories.finalScore,
      baselineScore: trajectories.baselineScore,
      improvement: trajectories.improvement,
      validated: trajectories.validated,
      turnCount: liveTurnCount,
      completionTokens: trajectories.completionTokens,
      error: trajectories.error,
      flaggedTurns: flaggedTurnsOf(db),
    })
    .from(trajectories)
    .where(where)
    .orderBy(...order)
    .limit(filter.per)
    .offset((filter.page - 1) * filter.per)
    .all();
  const tasks = runTasks(db, runId);
  const capped = filter.q !== undefined && total >= SEARCH_COUNT_LIMIT;
  return { total, capped, rows, tasks, pages: Math.max(1, Math.ceil(total / filter.per)) };
}

/**
 * Most turns (or trajectories) the index may name for a term before a search scans in list order instead: a
 * term that common fills a page from the first rows it reads.
 */
export const SEARCH_INDEX_CAP = 5000;

/** Most matches a search counts (the list then says "at least"). */
export const SEARCH_COUNT_LIMIT = 1000;

function countUpTo(db: StoreDb, where: SQL | undefined, limit: number): number {
  const matches = db.select({ one: sql`1` }).from(trajectories).where(where).limit(limit).as("matches");
  return db.select({ n: count() }).from(matches).get()?.n ?? 0;
}

/**
 * The run's distinct tasks in order, by a skip-scan of the (run_id, task) index: one lookup per task, not one
 * row per trajectory.
 */
function runTasks(db: StoreDb, runId: number): string[] {
  const rows = db.all<{ task: string | null }>(sql`
    WITH RECURSIVE t(task) AS (
      SELECT min(task) FROM ${trajectories} WHERE run_id = ${runId}
      UNION ALL
      SELECT (SELECT min(task) FROM ${trajectories} WHERE run_id = ${runId} AND task > t.task) FROM t
      WHERE t.task IS NOT NULL
    )
    SELECT task FROM t WHERE task IS NOT NULL`);
  return rows.map((r) => r.task as string);
}
export type TrajectoryListRow = ReturnType<typeof listTrajectories>["rows"][number];
