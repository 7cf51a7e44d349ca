import type { EventHandlers } from "@air/core";
import { formatEvalLine, formatStepLine, lossOf } from "./step-line.ts";

/** Where the view writes and whether it may redraw a line. */
export interface ProgressOptions {
  /** `[run] max_steps`, shown as `(done/total)`; undefined: left out. */
  totalSteps?: number;
  /** Rollouts per step (`[orchestrator] batch_size`), the live bar's length; undefined: a count without a bar. */
  rolloutsPerStep?: number;
  write?: (text: string) => void;
  /** Redraw one status line with a bar (a terminal); otherwise plain lines at each step's end. */
  tty?: boolean;
  /** Called after each completed step (the launcher writes progress.json there). */
  onStepEnd?: (step: number, metrics: Record<string, number>) => void;
  now?: () => number;
}

/** A compact progress view of a run, fed by the run's events. */
export interface ProgressView {
  hooks: Partial<EventHandlers>;
  /** Counters the view shows, for tests and the final summary. */
  state: { inFlight: number; turns: number; errors: number; stepsDone: number; lastReward?: number };
  /** Ends a redrawn line so later output starts on a fresh line. */
  finish(): void;
  /** Clears the redrawn line so a log line can be written; the next event redraws it. */
  clearLine(): void;
}

function bar(done: number, total: number, width = 20): string {
  const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}]`;
}

const fmt = (x: number | undefined, digits = 3) =>
  x === undefined || Number.isNaN(x) ? "-" : x.toFixed(digits);

/**
 * Builds the progress view: on a terminal one live line per step (bar, rollouts done and failed, in-flight,
 * turns/s, last reward), replaced at the step's end by the step line; otherwise only the step line. The step
 * line is the console logger's (`formatStepLine`: counts from the step's metrics, the numbers the store keeps;
 * warnings counted, not repeated, since the run's log prints each once). The step-line logger
 * (step-line-logger.ts) runs it on the run's bus.
 * @example
 * const view = createProgressView({ totalSteps: 10, rolloutsPerStep: 8, tty: process.stdout.isTTY });
 * await startRun(config, { hooks: view.hooks });
 * view.finish();
 */
export function createProgressView(options: ProgressOptions): ProgressView {
  const write = options.write ?? ((t: string) => process.stdout.write(t));
  const now = options.now ?? Date.now;
  const startMs = now();
  const state: ProgressView["state"] = { inFlight: 0, turns: 0, errors: 0, stepsDone: 0 };
  const finishedByStep = new Map<number, number>();
  /** Failed rollouts per step (`stopReason` "failed"): the same count as the step's `rollout/failed` metric. */
  const failedByStep = new Map<number, number>();
  let current = 0;
  let stepStartMs = startMs;
  let dirty = false;
  let lastLoss: number | undefined;

  /** When the first rollout started: the live turns/s is over the time rollouts ran, not the servers' startup. */
  let firstRolloutMs: number | undefined;
  /** Turns over the time since the first rollout; undefined ("-") until a second has passed. */
  const turnsPerSecond = () => {
    const seconds = firstRolloutMs === undefined ? 0 : (now() - firstRolloutMs) / 1000;
    return seconds >= 1 ? state.turns / seconds : undefined;
  };
  const redraw = () => {
    if (!options.tty) return;
    const done = finishedByStep.get(current) ?? 0;
    const of = options.totalSteps ? ` (${current + 1}/${options.totalSteps})` : "";
    const per = options.rolloutsPerStep;
    const rollouts = per ? `${bar(done, per)} ${done}/${per}` : `${done}`;
    write(
      `\r\x1b[2Kstep ${current}${of} ${rollouts} rollouts  in-flight ${state.inFlight}  ` +
        `turns/s ${fmt(turnsPerSecond(), 1)}  failed ${failedByStep.get(current) ?? 0}  reward ${fmt(state.lastReward)}`,
    );
    dirty = true;
  };

  const hooks: Partial<EventHandlers> = {
    "step:start": (e) => {
      current = e.step;
      stepStartMs = now();
      redraw();
    },
    "rollout:start": () => {
      firstRolloutMs ??= now();
      state.inFlight++;
      redraw();
    },
    "turn:end": () => {
      state.turns++;
    },
    "weights:updated": (e) => {
      lastLoss = lossOf(e.metrics) ?? lastLoss;
    },
    "rollout:end": (e) => {
      state.inFlight = Math.max(0, state.inFlight - 1);
      if (e.trajectory.stopReason === "failed") {
        state.errors++;
        failedByStep.set(e.trajectory.step, (failedByStep.get(e.trajectory.step) ?? 0) + 1);
      }
      finishedByStep.set(e.trajectory.step, (finishedByStep.get(e.trajectory.step) ?? 0) + 1);
      redraw();
    },
    "step:end": (e) => {
      const rewards = e.trajectories.map((t) => t.reward).filter((r): r is number => typeof r === "number");
      const mean = rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : undefined;
      state.lastReward = e.metrics["reward/mean"] ?? mean;
      state.stepsDone++;
      finishedByStep.delete(e.step);
      failedByStep.delete(e.step);
      if (dirty) write("\r\x1b[2K");
      dirty = false;
      const seconds = (now() - stepStartMs) / 1000;
      write(`${formatStepLine(e, { totalSteps: options.totalSteps, seconds, lastLoss })}\n`);
      options.onStepEnd?.(e.step, { ...e.metrics, ...(mean === undefined ? {} : { "reward/mean": mean }) });
    },
  };
  hooks["eval:end"] = (e) => {
    if (dirty) write("\r\x1b[2K");
    dirty = false;
    write(`${formatEvalLine(e)}\n`);
  };
  return {
    hooks,
    state,
    finish: () => {
      if (dirty) write("\n");
      dirty = false;
    },
    clearLine: () => {
      if (dirty) write("\r\x1b[2K");
      dirty = false;
    },
  };
}
