import { and, asc, eq, inArray, isNotNull, sql } from "drizzle-orm";
import type { StoreDb } from "../open.ts";
import { parseJson } from "../read.ts";
import { samples, trajectories, turns } from "../schema.ts";

/** Where a tree node forked from (core's `Trajectory.parent`), read from `trajectories.parent_json`. */
export interface StoredParent {
  trajectoryId: string;
  /** Index of the node's first turn (the turn at which its parent branched). */
  turnIndex: number;
}

/** One trajectory of a group with what a tree view needs: its parent link and the advantage it was trained with. */
export interface GroupNodeRow {
  rolloutId: string;
  step: number;
  task: string;
  exampleId: string;
  status: string;
  stopReason: string | null;
  error: string | null;
  /** A leaf's return (its whole path's reward); a tree's branch point stores the mean of its leaves. */
  reward: number | null;
  /** Turns of the node (a running one: its stored turns). */
  turnCount: number;
  /** Null for a flat rollout or a tree's root, and for a `parent_json` that is not `{ trajectoryId, turnIndex }`. */
  parent: StoredParent | null;
  /** Mean advantage of its training samples' loss tokens; null when none was stored (eval, dropped, zero-filtered). */
  advantage: number | null;
  /** Training samples stored for it. */
  samples: number;
}

function parent(text: string | null): StoredParent | null {
  const value = parseJson<unknown>(text, null);
  if (typeof value !== "object" || value === null) return null;
  const { trajectoryId, turnIndex } = value as Record<string, unknown>;
  if (typeof trajectoryId !== "string" || typeof turnIndex !== "number" || !Number.isInteger(turnIndex))
    return null;
  return { trajectoryId, turnIndex };
}

/**
 * Every trajectory of one group (`group_id`) in recording order, with its parent link and the mean advantage of
 * its stored training samples — the rows a tree view is built from (tree rollouts store one trajectory per node).
 * @example const nodes = groupNodes(db, 1, "0:nb0"); nodes.filter((n) => n.parent).length;
 */
export function groupNodes(db: StoreDb, runId: number, groupId: string): GroupNodeRow[] {
  const storedTurns = db.$count(
    turns,
    and(eq(turns.runId, trajectories.runId), eq(turns.rolloutId, trajectories.rolloutId)),
  );
  const rows = db
    .select({
      rolloutId: trajectories.rolloutId,
      step: trajectories.step,
      task: trajectories.task,
      exampleId: trajectories.exampleId,
      status: trajectories.status,
      stopReason: trajectories.stopReason,
      error: trajectories.error,
      reward: trajectories.reward,
      turnCount: sql<number>`CASE WHEN ${trajectories.status} = 'running' THEN ${storedTurns} ELSE ${trajectories.turnCount} END`,
      parentJson: trajectories.parentJson,
    })
    .from(trajectories)
    .where(and(eq(trajectories.runId, runId), eq(trajectories.groupId, groupId)))
    .orderBy(asc(trajectories.id))
    .all();
  if (rows.length === 0) return [];
  const steps = [...new Set(rows.map((r) => r.step))];
  const advantages = new Map<string, { sum: number; n: number }>();
  const sampleRows = db
    .select({ rolloutId: samples.rolloutId, advantage: samples.advantageMean })
    .from(samples)
    .where(and(eq(samples.runId, runId), inArray(samples.step, steps), eq(samples.groupId, groupId)))
    .all();
  for (const s of sampleRows) {
    const a = advantages.get(s.rolloutId) ?? { sum: 0, n: 0 };
    a.sum += s.advantage;
    a.n++;
    advantages.set(s.rolloutId, a);
  }
  return rows.map(({ parentJson, ...r }) => {
    const a = advantages.get(r.rolloutId);
    return {
      ...r,
      parent: parent(parentJson),
      advantage: a ? a.sum / a.n : null,
      samples: a?.n ?? 0,
    };
  });
}

/**
 * Which of these groups hold a tree rollout (any trajectory with a parent), e.g. to mark the rows of a list.
 * @example treeGroupIds(db, 1, ["0:nb0", "0:nb1"]).has("0:nb0");
 */
export function treeGroupIds(db: StoreDb, runId: number, groupIds: string[]): Set<string> {
  if (groupIds.length === 0) return new Set();
  const rows = db
    .selectDistinct({ groupId: trajectories.groupId })
    .from(trajectories)
    .where(
      and(
        eq(trajectories.runId, runId),
        inArray(trajectories.groupId, [...new Set(groupIds)]),
        isNotNull(trajectories.parentJson),
      ),
    )
    .all();
  return new Set(rows.map((r) => r.groupId));
}
