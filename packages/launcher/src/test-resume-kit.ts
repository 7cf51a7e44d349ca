import { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { StoredTrajectory } from "@air/logger-sqlite";

/**
 * What the kill -9 / `--resume` end-to-end tests share (resume-rollouts.test.ts, resume-tree.test.ts): a count read
 * from a live run's store, a stored turn's facts, the steps trained.
 */

/** `sql`'s `n` in the store at `dbPath` (0 while it does not exist or is busy). */
export function countRows(dbPath: string, sql: string): number {
  if (!existsSync(dbPath)) return 0;
  try {
    const db = new Database(dbPath, { readonly: true });
    try {
      return db.query<{ n: number }, []>(sql).get()?.n ?? 0;
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

/** What a turn looked like to the trainer and the dashboard. */
export const turnFacts = (t: StoredTrajectory["turns"][number]) => ({
  idx: t.idx,
  completion: t.completion,
  observation: t.observation,
  prompt: t.prompt,
  promptTokens: t.promptTokens,
  completionTokens: t.completionTokens,
  logprobMean: t.logprobMean,
  policyVersion: t.policyVersion,
});

/** The steps the (tiny) prime-rl trainer logged metrics for, in order (each trained step once). */
export function trainedSteps(runDir: string): number[] {
  return readFileSync(join(runDir, "prime-rl", "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as { step: number }).step);
}
