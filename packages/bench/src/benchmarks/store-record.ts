import { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { EventBus } from "@air/core";
import { openStore, RunRecorder } from "@air/logger-sqlite";
import { quantile } from "../stats.ts";
import { syntheticBatch, syntheticTrajectories } from "../synthetic.ts";

/** Turns per synthetic trajectory. */
export const TURNS = 5;
/** Trajectories per synthetic step. */
export const PER_STEP = 64;

/** The synthetic rollouts of a step (default: PER_STEP trajectories of TURNS short turns). */
export interface StepShape {
  perStep: number;
  turns: number;
  observation?: string;
  completion?: string;
  promptTokens?: (turn: number) => number;
}

/** Records `steps` steps of synthetic rollouts through the sqlite logger's recorder on a real bus. */
export async function recordSteps(
  dbPath: string,
  steps: number,
  shape: StepShape = { perStep: PER_STEP, turns: TURNS },
): Promise<Recorded> {
  const recorder = new RunRecorder(openStore(dbPath), { flushRows: 500, flushMs: 250 }, { name: "bench" });
  const writer = recorder.writer;
  const flush = writer.flush.bind(writer);
  let flushMs = 0;
  writer.flush = () => {
    const t0 = performance.now();
    flush();
    flushMs += performance.now() - t0;
  };
  const bus = new EventBus();
  bus.onAll(recorder.hooks, "sqlite");
  let ms = 0;
  let cpuMs = 0;
  let turns = 0;
  let changes = 0;
  try {
    for (let step = 0; step < steps; step++) {
      const trajectories = syntheticTrajectories({
        ...shape,
        count: shape.perStep,
        step,
        offset: step * shape.perStep,
      });
      const batch = syntheticBatch(step, trajectories);
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      await bus.emit("step:start", { step, policyVersion: step });
      for (const t of trajectories) {
        const base = { rolloutId: t.id, exampleId: t.exampleId, task: t.task, groupId: t.groupId, step };
        await bus.emit("rollout:start", { ...base, policyVersion: step, attempt: 0 });
        // As in core, a turn has no reward at turn:end; rewards are applied to the same objects before rollout:end.
        const rewards = t.turns.map((turn) => turn.reward);
        for (const turn of t.turns) {
          turn.reward = undefined;
          await bus.emit("turn:end", { rolloutId: t.id, step, turn });
        }
        t.turns.forEach((turn, i) => {
          turn.reward = rewards[i];
          turn.rewardBreakdown = { delta: rewards[i] ?? 0 };
        });
        await bus.emit("rollout:end", { trajectory: t });
        turns += t.turns.length;
      }
      await bus.emit("step:end", { step, trajectories, batch, metrics: batch.metrics, warnings: [] });
      recorder.writer.flush();
      ms += performance.now() - t0;
      const c = process.cpuUsage(c0);
      cpuMs += (c.user + c.system) / 1000;
    }
    await bus.emit("run:end", { status: "completed", unsettled: [] });
    changes = changedRows(recorder.db.$client);
  } finally {
    recorder.close();
  }
  return {
    ms,
    cpuMs,
    turns,
    flushShare: flushMs / ms,
    commitShare: writer.commitMs / ms,
    opsPerTurn: writer.written / turns,
    rowWritesPerTurn: changes / turns,
    bytesPerTurn: statSync(dbPath).size / turns,
  };
}

/** Rows inserted, updated or deleted on this connection so far (SQLite's `total_changes()`). */
function changedRows(client: Database): number {
  const row = client.query("SELECT total_changes() AS n").get();
  return typeof row === "object" && row !== null && "n" in row && typeof row.n === "number" ? row.n : 0;
}

export interface Recorded {
  ms: number;
  /** CPU time of this process over the same steps (user + system): on a shared machine, what the recording cost. */
  cpuMs: number;
  turns: number;
  /** Share of the time spent in BatchWriter.flush (drizzle + SQLite), the rest is events and row building. */
  flushShare: number;
  /** Share of the time spent committing (SQLite writing the WAL), part of flushShare. */
  commitShare: number;
  /** Queued write operations per turn. */
  opsPerTurn: number;
  /** Rows inserted or updated per turn, every table (SQLite's total_changes ÷ turns). */
  rowWritesPerTurn: number;
  /** Database file size per turn once closed (checkpointed). */
  bytesPerTurn: number;
}

/** Times the two SQL statements of the run page's flat-reward panel directly (profile of the slowest page). */
export function profileRunPage(dbPath: string): Array<[string, number]> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const series = db.query(
      `SELECT step, name, value FROM metrics WHERE run_id = ? AND source = 'step' AND name IN ('reward/mean', 'reward/std')
         AND step IN (SELECT DISTINCT step FROM metrics WHERE run_id = ? ORDER BY step DESC LIMIT ?)`,
    );
    const timeouts = db.query(
      `SELECT t.step AS step, count(DISTINCT t.rollout_id) AS n FROM turns u JOIN trajectories t
         ON t.run_id = u.run_id AND t.rollout_id = u.rollout_id
       WHERE u.run_id = ? AND (u.tool_error LIKE '%timeout%' OR u.tool_error LIKE '%timed out%') GROUP BY t.step`,
    );
    const time = (f: () => unknown) => {
      f();
      const list: number[] = [];
      for (let i = 0; i < 10; i++) {
        const t0 = performance.now();
        f();
        list.push(performance.now() - t0);
      }
      return quantile(list, 0.5);
    };
    return [
      ["step metrics of the last 50 steps (metrics index)", time(() => series.all(1, 1, 50))],
      [
        "timeout count per step: scans every turn row of the run (LIKE on tool_error)",
        time(() => timeouts.all(1)),
      ],
    ];
  } finally {
    db.close();
  }
}

export interface RawInserted {
  ms: number;
  turns: number;
  /** Share of the time spent committing. */
  commitShare: number;
  /** Database file size per turn once closed. */
  bytesPerTurn: number;
}

/** The same turns as plain ~2.5 KB JSON rows in 1000-row transactions: SQLite's ceiling for rows this size. */
export function rawInsert(dbPath: string, steps: number): RawInserted {
  const db = new Database(dbPath, { create: true });
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  db.exec("CREATE TABLE turns (rollout TEXT, idx INTEGER, body TEXT, PRIMARY KEY (rollout, idx))");
  const insert = db.prepare("INSERT INTO turns VALUES (?, ?, ?)");
  let ms = 0;
  let turns = 0;
  let commitMs = 0;
  try {
    for (let step = 0; step < steps; step++) {
      const trajectories = syntheticTrajectories({
        count: PER_STEP,
        turns: TURNS,
        step,
        offset: step * PER_STEP,
      });
      const t0 = performance.now();
      const rows = trajectories.flatMap((t) =>
        t.turns.map((turn): [string, number, string] => [
          t.id,
          turn.index,
          JSON.stringify({ p: turn.promptMessages.slice(-2), c: turn.completionText, o: turn.observation }),
        ]),
      );
      for (let i = 0; i < rows.length; i += 1000) {
        let inserted = 0;
        db.transaction(() => {
          for (const r of rows.slice(i, i + 1000)) insert.run(...r);
          inserted = performance.now();
        })();
        commitMs += performance.now() - inserted;
      }
      ms += performance.now() - t0;
      turns += rows.length;
    }
  } finally {
    db.close();
  }
  return { ms, turns, commitShare: commitMs / ms, bytesPerTurn: statSync(dbPath).size / turns };
}
