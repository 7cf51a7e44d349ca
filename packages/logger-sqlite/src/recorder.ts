import type { EventHandlers, RecordedRollout, Turn } from "@air/core";
import { recordEvaluations } from "./evaluations.ts";
import type { StoreDb } from "./open.ts";
import { readRecordedRollouts } from "./recorded.ts";
import { type ContinuedRun, continueRun, evalRecorded } from "./resume.ts";
import { sampleRow, trajectoryRow, turnOutcomeRow, turnResumeRow, turnRow } from "./rows.ts";
import { evaluationRows, metricRowsOf, processRow, sandboxRow } from "./rows-run.ts";
import { runs } from "./schema.ts";
import { prepareStatements, SAMPLE_CHUNK, type Statements } from "./statements.ts";
import { BatchWriter, type BatchWriterOptions } from "./writer.ts";

/** How often a recorder writes its heartbeat by default (see `STALE_MS` for when a reader calls a run dead). */
export const HEARTBEAT_MS = 5000;

export interface RecorderOptions extends BatchWriterOptions {
  /** Milliseconds between heartbeats (`runs.heartbeat_at`); 0 writes none. Default `HEARTBEAT_MS`. */
  heartbeatMs?: number;
}

/** The run a recorder records: its name and dir, and `resume` when it continues the run stored for that dir. */
export interface RecordedRunInfo {
  name: string;
  runDir?: string;
  resume?: { startStep: number; rollouts?: boolean };
}

/**
 * Turns run events into store rows. Handlers only build rows and queue prepared writes; `writer` flushes
 * them in one transaction every `flushRows` writes or `flushMs` milliseconds. Each turn is written once, at
 * turn:end; rollout:end only updates the columns that change later (rewards, the auto-submit's scores and
 * info), and step:end adds one `samples` row (advantage summary) per training sample.
 * @example
 * const recorder = new RunRecorder(openStore(file), { flushRows: 500, flushMs: 250 });
 * bus.onAll(recorder.hooks, "sqlite");
 * recorder.close();
 */
export class RunRecorder {
  readonly runId: number;
  readonly writer: BatchWriter;
  private readonly write: Statements;
  /** The last turn seen per rollout: the next turn's prompt is stored relative to it. */
  private readonly lastTurn = new Map<string, Turn>();
  private readonly attempts = new Map<string, number>();
  /** Turn indices stored at turn:end per rollout; rollout:end then only updates their outcome. */
  private readonly storedTurns = new Map<string, Set<number>>();

  /** Set when this recorder continues a run (`rl --resume`): what it dropped of the interrupted steps. */
  readonly continued: ContinuedRun | undefined;
  /** The resumed steps' rollouts kept with their turns (`rl --resume`), by id: they continue from their last turn. */
  readonly recorded = new Map<string, RecordedRollout>();
  private readonly heartbeat: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly db: StoreDb,
    options: RecorderOptions,
    run: RecordedRunInfo = { name: "run" },
  ) {
    this.continued =
      run.resume && run.runDir
        ? continueRun(db, run.runDir, run.resume.startStep, run.resume.rollouts === true)
        : undefined;
    this.runId =
      this.continued?.runId ??
      db
        .insert(runs)
        .values({
          name: run.name,
          runDir: run.runDir ?? null,
          startedAt: Date.now(),
          heartbeatAt: Date.now(),
        })
        .returning({ id: runs.id })
        .get().id;
    if (this.continued)
      for (const r of readRecordedRollouts(db, this.runId, this.continued.kept))
        this.recorded.set(r.rolloutId, r);
    this.write = prepareStatements(db);
    this.writer = new BatchWriter(db.$client, options);
    const every = options.heartbeatMs ?? HEARTBEAT_MS;
    if (every > 0) {
      this.heartbeat = setInterval(() => this.beat(), every);
      this.heartbeat.unref?.();
    }
  }

  /** Writes `runs.heartbeat_at = now` (a reader shows a running run without a fresh heartbeat as dead). */
  beat(): void {
    try {
      this.write.heartbeat({ id: this.runId, heartbeatAt: Date.now() });
    } catch (error) {
      this.writer.reportError(error);
    }
  }

  private queue(op: () => void): void {
    this.writer.push(op);
  }

  /**
   * Event handlers to subscribe to the run's bus: one for every event (typed `EventHandlers`, not `Partial`,
   * so an event added to core without a handler here fails `tsc`).
   */
  readonly hooks: EventHandlers = {
    "run:start": (e) => {
      const row = { id: this.runId, name: e.runName, runDir: e.runDir, configJson: JSON.stringify(e.config) };
      // a fresh run's start is the loop's (step 0's time counts from it); a continued run keeps its first start
      const startedAt = this.continued ? undefined : e.startedAtMs;
      this.queue(() => {
        this.write.runStart(row);
        if (startedAt !== undefined) this.write.runStartedAt({ id: this.runId, startedAt });
      });
    },
    "step:start": (e) => {
      const row = { runId: this.runId, step: e.step, policyVersion: e.policyVersion, startedAt: Date.now() };
      this.queue(() => this.write.stepStart(row));
    },
    "rollout:start": (e) => {
      this.attempts.set(e.rolloutId, e.attempt);
      this.lastTurn.delete(e.rolloutId);
      this.storedTurns.set(e.rolloutId, new Set());
      // a kept rollout continues after its stored turns, or (its state lost) starts over without them
      const kept = this.recorded.get(e.rolloutId);
      this.recorded.delete(e.rolloutId);
      const resumed = kept && e.resumedAt !== undefined ? kept : undefined;
      if (resumed) {
        this.storedTurns.set(e.rolloutId, new Set(resumed.turns.map((t) => t.index)));
        const last = resumed.turns.at(-1);
        if (last) this.lastTurn.set(e.rolloutId, last);
      }
      const row = {
        runId: this.runId,
        rolloutId: e.rolloutId,
        step: e.step,
        exampleId: e.exampleId,
        task: e.task,
        groupId: e.groupId,
        split: e.split ?? "train",
        attempt: e.attempt,
        status: "running",
        turnCount: 0,
        startedAt: resumed?.startMs ?? Date.now(),
        // a tree node's link is stored from its start: a resume rebuilds the tree from the nodes in flight
        parentJson: e.parent ? JSON.stringify(e.parent) : null,
      };
      const fresh = row.attempt > 0 || (kept !== undefined && !resumed);
      this.queue(() => {
        this.write.trajectoryStart(row);
        if (fresh) {
          this.write.deleteTurns({ runId: this.runId, rolloutId: row.rolloutId });
          this.write.deleteTurnResume({ runId: this.runId, rolloutId: row.rolloutId });
        }
      });
    },
    "turn:end": (e) => {
      const previous = this.lastTurn.get(e.rolloutId);
      const row = turnRow(this.runId, e.rolloutId, e.turn, previous);
      const resume = e.point && turnResumeRow(this.runId, e.rolloutId, e.turn, previous, e.point);
      this.lastTurn.set(e.rolloutId, e.turn);
      this.storedTurns.get(e.rolloutId)?.add(e.turn.index);
      // one queued op: the turn and its resume point land in the same transaction
      this.queue(() => {
        this.write.turn(row);
        if (resume) this.write.turnResume(resume);
      });
      // The env keeps the snapshots of this turn and the one before only (`saveState` prunes older ones): this turn
      // must be on disk before the next one's is saved, or a kill -9 then leaves the store's last point without its
      // snapshot and the rollout starts over. One transaction per tick of the event loop, not one per flush_ms.
      if (resume) this.writer.flushSoon();
    },
    "rollout:end": (e) => {
      const t = e.trajectory;
      const stored = this.storedTurns.get(t.id);
      this.lastTurn.delete(t.id);
      this.storedTurns.delete(t.id);
      const row = trajectoryRow(this.runId, t, this.attempts.get(t.id) ?? 0);
      this.attempts.delete(t.id);
      // Turns written at turn:end only gain their outcome (narrow UPDATE); any turn:end missed is written whole.
      const outcomes: Array<ReturnType<typeof turnOutcomeRow>> = [];
      const missed: Array<ReturnType<typeof turnRow>> = [];
      t.turns.forEach((turn, i) => {
        if (stored?.has(turn.index)) outcomes.push(turnOutcomeRow(this.runId, t.id, turn));
        else missed.push(turnRow(this.runId, t.id, turn, t.turns[i - 1]));
      });
      this.queue(() => {
        this.write.trajectoryEnd(row);
        if (t.turns.length === 0) {
          this.write.deleteTurns({ runId: this.runId, rolloutId: t.id });
          this.write.deleteTurnResume({ runId: this.runId, rolloutId: t.id });
        }
        for (const r of outcomes) this.write.turnOutcome(r);
        for (const r of missed) this.write.turn(r);
      });
    },
    "step:end": (e) => {
      const stepRow = {
        runId: this.runId,
        step: e.step,
        endedAt: Date.now(),
        trajectoryCount: e.trajectories.length,
        sampleCount: e.batch.samples.length,
        turnCount: e.trajectories.reduce((a, t) => a + t.turns.length, 0),
        warningsJson: JSON.stringify(e.warnings),
      };
      const sampleRows = e.batch.samples.map((s) => sampleRow(this.runId, e.step, s));
      // Samples first: the step's `ended_at` fires the trigger that summarizes them (`step_advantages`).
      for (let i = 0; i < sampleRows.length; i += SAMPLE_CHUNK) {
        const chunk = sampleRows.slice(i, i + SAMPLE_CHUNK);
        this.queue(() => this.write.samples(chunk));
      }
      this.queue(() => this.write.stepEnd(stepRow));
      this.dropUnresumed(e.step);
      this.pushMetrics(e.step, e.metrics, "step");
      for (const message of e.warnings)
        this.queue(() => this.write.warning({ runId: this.runId, step: e.step, message }));
    },
    "eval:end": (e) => {
      const metricRows = metricRowsOf(this.runId, e.step, e.metrics, "eval");
      const rows = evaluationRows(e.step, e.policyVersion, e.metrics);
      const ids = e.trajectories.map((t) => t.id);
      // One op, written at once: the evaluations rows say the eval ended (`evalRecorded`), so a kill leaves all of
      // it or none; the eval's resume points go with them (the loop drops its states once this resolves).
      this.queue(() => {
        for (const r of metricRows) this.write.metric(r);
        recordEvaluations(this.db, this.runId, rows);
        for (const rolloutId of ids) this.write.deleteTurnResume({ runId: this.runId, rolloutId });
      });
      this.dropUnresumed(e.step);
      this.writer.flush();
    },
    "weights:updated": (e) => {
      this.pushMetrics(Math.max(0, e.weights.version - 1), e.metrics, "trainer");
      // steps before this version are trained (a resume starts after them): their token ids and points go. Not
      // at step:end: a kill while the step trains resumes at that step, whose rollouts then continue from the end.
      const trained = { runId: this.runId, step: e.weights.version };
      this.queue(() => this.write.deleteTrainedResume(trained));
    },
    "run:end": (e) => {
      const row = { id: this.runId, status: e.status, error: e.error ?? null, endedAt: Date.now() };
      this.queue(() => this.write.runEnd(row));
      this.writer.flush();
    },
    log: (e) => {
      if (e.level === "debug") return;
      const row = {
        runId: this.runId,
        level: e.level,
        source: e.source,
        message: e.message,
        timeMs: e.timeMs,
      };
      this.queue(() => this.write.log(row));
    },
    "sandbox:state": (e) => {
      const row = sandboxRow(this.runId, e);
      this.queue(() => this.write.sandbox(row));
    },
    "process:state": (e) => {
      const row = processRow(this.runId, e);
      this.queue(() => this.write.process(row));
    },
  };

  /** Flushes what is queued and closes the database; later events are dropped. */
  close(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.writer.close();
    this.db.$client.close();
  }

  /** Whether this run recorded the end of the eval after `step` (`PluginBase.evalRecorded`, read on `rl --resume`). */
  evalRecorded(step: number): boolean {
    return evalRecorded(this.db, this.runId, step);
  }

  /**
   * The rollouts kept for `rl --resume` (`recorded`) of steps up to `step` that no rollout:start took up by that
   * step's (or eval's) end: the loop did not continue them (a tree that started over and grew fewer nodes). Their
   * rows, turns and points go, with a warning naming them, so none stays "running".
   */
  private dropUnresumed(step: number): void {
    const stale = [...this.recorded.values()].filter((r) => r.step <= step).map((r) => r.rolloutId);
    if (stale.length === 0) return;
    for (const id of stale) this.recorded.delete(id);
    const message = `dropped ${stale.length} recorded rollout(s) the resume did not continue: ${stale.join(", ")}`;
    const log = { runId: this.runId, level: "warn", source: "sqlite", message, timeMs: Date.now() };
    this.queue(() => {
      for (const rolloutId of stale) {
        const row = { runId: this.runId, rolloutId };
        this.write.deleteTurns(row);
        this.write.deleteTurnResume(row);
        this.write.deleteTrajectory(row);
      }
      this.write.log(log);
    });
  }

  private pushMetrics(step: number, values: Record<string, number>, source: "step" | "trainer"): void {
    for (const row of metricRowsOf(this.runId, step, values, source))
      this.queue(() => this.write.metric(row));
  }
}
