import { and, eq, getTableColumns, inArray, lt, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { assign, type ColumnKey, columnKeys, compileInsertMany, compileWrite } from "./compile.ts";
import type { StoreDb } from "./open.ts";
import {
  logs,
  metrics,
  processes,
  runs,
  samples,
  sandboxes,
  steps,
  trajectories,
  turnResume,
  turns,
  warnings,
} from "./schema.ts";

/** `SET column = excluded.column` for each key: what an upsert overwrites on conflict. */
function excluded<T extends SQLiteTable, K extends ColumnKey<T>>(
  table: T,
  keys: readonly K[],
): Record<K, SQL> {
  const columns: Record<string, SQLiteColumn> = getTableColumns(table);
  const out: Partial<Record<K, SQL>> = {};
  for (const k of keys) {
    const column = columns[k];
    if (!column) throw new Error(`no column ${k} in ${String(table)}`);
    out[k] = sql.raw(`excluded."${column.name}"`);
  }
  return out as Record<K, SQL>;
}

/** `keys` without `drop`, typed as such. */
function without<K extends string, D extends K>(
  keys: readonly K[],
  drop: readonly D[],
): Array<Exclude<K, D>> {
  const dropped = new Set<string>(drop);
  return keys.filter((k): k is Exclude<K, D> => !dropped.has(k));
}

/** Rows per multi-row samples INSERT (a step has one sample per turn, or one per trajectory). */
export const SAMPLE_CHUNK = 64;

/** Columns of a turn that change after turn:end: rewards, and the auto-submit result on the last turn. */
export const TURN_OUTCOME_KEYS = [
  "reward",
  "rewardBreakdownJson",
  "scoresJson",
  "stepKind",
  "evaluationError",
  "infoJson",
] as const satisfies ReadonlyArray<ColumnKey<typeof turns>>;

/**
 * Every write of the recorder, each one SQL statement built with drizzle against the schema and prepared once
 * (see `compileWrite`). Each takes a row keyed like the schema's columns, typed from the schema.
 * @example
 * const write = prepareStatements(db);
 * write.metric({ runId: 1, step: 0, name: "loss", value: 0.5, source: "step" });
 */
export function prepareStatements(db: StoreDb) {
  const client = db.$client;
  const turnKeys = columnKeys(turns);
  const trajectoryKeys = without(columnKeys(trajectories), ["id"]);
  const turnResumeKeys = columnKeys(turnResume);
  const trajectoryStartKeys = [
    "runId",
    "rolloutId",
    "step",
    "exampleId",
    "task",
    "groupId",
    "split",
    "attempt",
    "status",
    "turnCount",
    "startedAt",
    "parentJson",
  ] as const;
  const stepEndKeys = [
    "runId",
    "step",
    "endedAt",
    "trajectoryCount",
    "sampleCount",
    "turnCount",
    "warningsJson",
  ] as const;
  const sampleKeys = [
    "runId",
    "step",
    "rolloutId",
    "groupId",
    "tokens",
    "lossTokens",
    "advantageMean",
    "advantageMin",
    "advantageMax",
    "policyVersion",
    "truncatedTokens",
  ] as const;
  return {
    runStart: compileWrite(client, runs, ["id", "name", "runDir", "configJson"], (p) =>
      db
        .update(runs)
        .set(assign(p, ["name", "runDir", "configJson"]))
        .where(eq(runs.id, p.id)),
    ),
    runStartedAt: compileWrite(client, runs, ["id", "startedAt"], (p) =>
      db
        .update(runs)
        .set(assign(p, ["startedAt"]))
        .where(eq(runs.id, p.id)),
    ),
    heartbeat: compileWrite(client, runs, ["id", "heartbeatAt"], (p) =>
      db
        .update(runs)
        .set(assign(p, ["heartbeatAt"]))
        .where(eq(runs.id, p.id)),
    ),
    runEnd: compileWrite(client, runs, ["id", "status", "error", "endedAt"], (p) =>
      db
        .update(runs)
        .set(assign(p, ["status", "error", "endedAt"]))
        .where(eq(runs.id, p.id)),
    ),
    stepStart: compileWrite(client, steps, ["runId", "step", "policyVersion", "startedAt"], (p) =>
      db
        .insert(steps)
        .values(p)
        .onConflictDoUpdate({
          target: [steps.runId, steps.step],
          set: excluded(steps, ["policyVersion", "startedAt"]),
        }),
    ),
    stepEnd: compileWrite(client, steps, stepEndKeys, (p) =>
      db
        .insert(steps)
        .values(p)
        .onConflictDoUpdate({
          target: [steps.runId, steps.step],
          set: excluded(steps, without(stepEndKeys, ["runId", "step"])),
        }),
    ),
    trajectoryStart: compileWrite(client, trajectories, trajectoryStartKeys, (p) =>
      db
        .insert(trajectories)
        .values(p)
        .onConflictDoUpdate({
          target: [trajectories.runId, trajectories.rolloutId],
          set: excluded(trajectories, ["attempt", "status", "turnCount", "parentJson"]),
        }),
    ),
    trajectoryEnd: compileWrite(client, trajectories, trajectoryKeys, (p) =>
      db
        .insert(trajectories)
        .values(p)
        .onConflictDoUpdate({
          target: [trajectories.runId, trajectories.rolloutId],
          set: excluded(trajectories, without(trajectoryKeys, ["runId", "rolloutId"])),
        }),
    ),
    /** The whole turn row (written once, at turn:end; an upsert so a repeated event cannot fail a batch). */
    turn: compileWrite(client, turns, turnKeys, (p) =>
      db
        .insert(turns)
        .values(p)
        .onConflictDoUpdate({
          target: [turns.runId, turns.rolloutId, turns.idx],
          set: excluded(turns, without(turnKeys, ["runId", "rolloutId", "idx"])),
        }),
    ),
    /** The narrow UPDATE at rollout:end: only the columns in TURN_OUTCOME_KEYS. */
    turnOutcome: compileWrite(client, turns, ["runId", "rolloutId", "idx", ...TURN_OUTCOME_KEYS], (p) =>
      db
        .update(turns)
        .set(assign(p, TURN_OUTCOME_KEYS))
        .where(and(eq(turns.runId, p.runId), eq(turns.rolloutId, p.rolloutId), eq(turns.idx, p.idx))),
    ),
    deleteTurns: compileWrite(client, turns, ["runId", "rolloutId"], (p) =>
      db.delete(turns).where(and(eq(turns.runId, p.runId), eq(turns.rolloutId, p.rolloutId))),
    ),
    /** A turn's token ids, logprobs and resume point (`rl --resume`), with the turn in one transaction. */
    turnResume: compileWrite(client, turnResume, turnResumeKeys, (p) =>
      db
        .insert(turnResume)
        .values(p)
        .onConflictDoUpdate({
          target: [turnResume.runId, turnResume.rolloutId, turnResume.idx],
          set: excluded(turnResume, without(turnResumeKeys, ["runId", "rolloutId", "idx"])),
        }),
    ),
    /** The token ids and points of rollouts of steps before `step` (trained: their weights were loaded). */
    deleteTrainedResume: compileWrite(client, trajectories, ["runId", "step"], (p) =>
      db.delete(turnResume).where(
        and(
          eq(turnResume.runId, p.runId),
          inArray(
            turnResume.rolloutId,
            db
              .select({ id: trajectories.rolloutId })
              .from(trajectories)
              .where(and(eq(trajectories.runId, p.runId), lt(trajectories.step, p.step))),
          ),
        ),
      ),
    ),
    deleteTrajectory: compileWrite(client, trajectories, ["runId", "rolloutId"], (p) =>
      db
        .delete(trajectories)
        .where(and(eq(trajectories.runId, p.runId), eq(trajectories.rolloutId, p.rolloutId))),
    ),
    deleteTurnResume: compileWrite(client, turnResume, ["runId", "rolloutId"], (p) =>
      db.delete(turnResume).where(and(eq(turnResume.runId, p.runId), eq(turnResume.rolloutId, p.rolloutId))),
    ),
    metric: compileWrite(client, metrics, ["runId", "step", "name", "value", "source"], (p) =>
      db
        .insert(metrics)
        .values(p)
        .onConflictDoUpdate({
          target: [metrics.runId, metrics.name, metrics.step],
          set: excluded(metrics, ["value", "source"]),
        }),
    ),
    /** Samples of a step, up to SAMPLE_CHUNK rows per statement. */
    samples: compileInsertMany(client, samples, sampleKeys, SAMPLE_CHUNK, (rows) =>
      db.insert(samples).values(rows),
    ),
    warning: compileWrite(client, warnings, ["runId", "step", "message"], (p) =>
      db.insert(warnings).values(p),
    ),
    log: compileWrite(client, logs, ["runId", "level", "source", "message", "timeMs"], (p) =>
      db.insert(logs).values(p),
    ),
    sandbox: compileWrite(
      client,
      sandboxes,
      ["runId", "sandboxId", "rolloutId", "state", "command", "host", "updatedAt"],
      (p) =>
        db
          .insert(sandboxes)
          .values(p)
          .onConflictDoUpdate({
            target: [sandboxes.runId, sandboxes.sandboxId],
            set: excluded(sandboxes, ["rolloutId", "state", "command", "host", "updatedAt"]),
          }),
    ),
    process: compileWrite(client, processes, ["runId", "role", "pid", "state", "logPath", "updatedAt"], (p) =>
      db
        .insert(processes)
        .values(p)
        .onConflictDoUpdate({
          target: [processes.runId, processes.role],
          set: excluded(processes, ["pid", "state", "logPath", "updatedAt"]),
        }),
    ),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
