import { readLatestAudits } from "./audits.ts";
import type { StoreDb } from "./open.ts";

/** The audit's finding that carries a task's evaluation noise: its `score` is the std of the baseline repeats. */
export const EVALUATION_NOISE_PROBE = "evaluation noise";

/**
 * Each task's evaluation noise from its latest audit in this store (`bun run audit` writes it): the standard
 * deviation of the priority metric over the repeated baseline evaluations. Tasks without one are absent.
 * @example readEvaluationNoise(db) // { apartmentRent: 0, rpsTournament: 0.0123 }
 */
export function readEvaluationNoise(db: StoreDb): Record<string, number> {
  const out: Record<string, number> = {};
  for (const row of readLatestAudits(db))
    if (row.probe === EVALUATION_NOISE_PROBE && row.score !== undefined && Number.isFinite(row.score))
      out[row.task] = row.score;
  return out;
}
