import { z } from "@air/core";
import type { SnapshotHandle } from "./snapshot-handle.ts";
import { type SnapshotStore, sweepIncomplete } from "./snapshot-store.ts";
import type { Runtime, Sandbox } from "./types.ts";

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

/**
 * Saves `sandbox`'s state after turn `turn` as its rollout's snapshot (`<rollout>-t<turn>`) and prunes the
 * rollout's snapshots before the turn before: a kill before the store records this turn resumes from that one.
 * @example const snapshot = await saveTurn(runtime, sandbox, { store, rolloutId: "s0-r3" }, 4);
 */
export async function saveTurn(
  runtime: Pick<Runtime, "saveSnapshot">,
  sandbox: Sandbox,
  snaps: SessionSnapshots,
  turn: number,
): Promise<SnapshotHandle> {
  const snapshot = await runtime.saveSnapshot(sandbox, snaps.store, snapshotId(snaps.rolloutId, turn));
  await snaps.store.prune((id) => ofRollout(snaps.rolloutId, id, turn - 1));
  return snapshot;
}

/** A rollout ended: its snapshots go, from its own store and from `restoredFrom` (a store it was resumed from). */
export async function dropRollout(snaps: SessionSnapshots, restoredFrom?: SnapshotStore): Promise<void> {
  for (const store of [snaps.store, restoredFrom]) await store?.prune((id) => ofRollout(snaps.rolloutId, id));
}

/**
 * An env's `keepStates` and `dropStates` over its snapshot store (`Environment`, `rl --resume`): `keep` — before
 * any rollout runs — removes saves a kill cut short and every rollout's snapshots but those of `rolloutIds` (the
 * ones that continue); `drop` removes those of `rolloutIds` (tree nodes taken as recorded, once trained).
 * @example const { keep, drop } = rolloutStates(snapshots); return { ..., keepStates: keep, dropStates: drop };
 */
export function rolloutStates(store: SnapshotStore): {
  keep: (rolloutIds: string[]) => Promise<void>;
  drop: (rolloutIds: string[]) => Promise<void>;
} {
  const of = (ids: string[]) => (name: string) => ids.some((id) => ofRollout(id, name));
  return {
    keep: async (rolloutIds) => {
      await sweepIncomplete(store);
      await store.prune((name) => !of(rolloutIds)(name));
    },
    drop: async (rolloutIds) => {
      await store.prune(of(rolloutIds));
    },
  };
}
