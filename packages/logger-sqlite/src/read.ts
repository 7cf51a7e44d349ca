import type { Message } from "@air/core";
import { and, asc, eq } from "drizzle-orm";
import type { StoreDb } from "./open.ts";
import { trajectories, turns } from "./schema.ts";
import { rebuildPrompts, type ValidationPoint } from "./summary.ts";

export type TrajectoryRecord = typeof trajectories.$inferSelect;
export type TurnRecord = typeof turns.$inferSelect;

/** A stored turn with its JSON columns parsed and its full prompt rebuilt. */
export interface StoredTurn extends TurnRecord {
  prompt: Message[];
  scores: Record<string, number> | null;
  rewardBreakdown: Record<string, number> | null;
}

export interface StoredTrajectory {
  trajectory: TrajectoryRecord;
  initialMessages: Message[];
  validationHistory: ValidationPoint[];
  turns: StoredTurn[];
}

/**
 * Parses a JSON column, returning `fallback` for null or malformed text (an old or hand-made row).
 * @example const scores = parseJson<Record<string, number> | null>(row.scoresJson, null);
 */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/**
 * Reads one trajectory and its turns (full prompts rebuilt), or null when the id is unknown.
 * @example const t = readTrajectory(db, 1, "s0-r3"); t?.turns[0]?.prompt;
 */
export function readTrajectory(db: StoreDb, runId: number, rolloutId: string): StoredTrajectory | null {
  const trajectory = db
    .select()
    .from(trajectories)
    .where(and(eq(trajectories.runId, runId), eq(trajectories.rolloutId, rolloutId)))
    .get();
  if (!trajectory) return null;
  const rows = db
    .select()
    .from(turns)
    .where(and(eq(turns.runId, runId), eq(turns.rolloutId, rolloutId)))
    .orderBy(asc(turns.idx))
    .all();
  const prompts = rebuildPrompts(
    rows.map((r) => ({
      promptBase: r.promptBase,
      promptMessages: parseJson<Message[]>(r.promptMessagesJson, []),
      fromPrevious: r.promptFromPrevious,
      completion: r.completion,
      observation: r.observation,
    })),
  );
  return {
    trajectory,
    initialMessages: parseJson<Message[]>(trajectory.initialMessagesJson, []),
    validationHistory: parseJson<ValidationPoint[]>(trajectory.validationHistoryJson, []),
    turns: rows.map((r, i) => ({
      ...r,
      prompt: prompts[i] ?? [],
      scores: parseJson<Record<string, number> | null>(r.scoresJson, null),
      rewardBreakdown: parseJson<Record<string, number> | null>(r.rewardBreakdownJson, null),
    })),
  };
}
