import { z } from "@air/core";
import type { SnapshotHandle } from "./snapshot-handle.ts";
import type { SnapshotStore } from "./snapshot-store.ts";

/**
 * Where an env session's turn snapshots go and under which rollout they are named (`<rollout>-t<turn>`): what
 * `EnvSession.saveState` of the mlgym and harbor envs writes (`rl --resume`, `orchestrator.resume_rollouts`).
 */
export interface SessionSnapshots {
  store: SnapshotStore;
  rolloutId: string;
}

/** The snapshot id of `rolloutId`'s state after turn `turn`. */
export function snapshotId(rolloutId: string, turn: number): string {
  return `${rolloutId}-t${turn}`;
}

/** True for a snapshot of `rolloutId` (any turn), earlier than turn `before` when given. */
export function ofRollout(rolloutId: string, id: string, before?: number): boolean {
  const prefix = `${rolloutId}-t`;
  if (!id.startsWith(prefix)) return false;
  const turn = Number(id.slice(prefix.length));
  return Number.isInteger(turn) && (before === undefined || turn < before);
}

/** A {@link SnapshotHandle} as an env recorded it (JSON read back on `rl --resume`). */
export const snapshotHandleSchema: z.ZodType<SnapshotHandle> = z.object({
  id: z.string(),
  format: z.enum(["tree", "tar"]),
  path: z.string(),
  cwd: z.string(),
  exports: z.string().optional(),
  outside: z.array(z.string()).optional(),
  bytes: z.number(),
  createdAtMs: z.number(),
  transferredBytes: z.number().optional(),
});
