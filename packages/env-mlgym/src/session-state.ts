import { type EnvState, z } from "@air/core";
import type { SnapshotHandle } from "@air/sandbox";
import type { SessionSnapshot } from "./session-types.ts";

/**
 * What an mlgym session records after each turn (`rl --resume`, `orchestrator.resume_rollouts`): its sandbox's
 * stored snapshot (`Runtime.saveSnapshot`), the open file, window line, directory, step count and the episode's
 * last priority score (the `score-jump` reference).
 */
export interface MlgymState {
  snapshot: SnapshotHandle;
  session: Omit<SessionSnapshot, "workspace">;
  lastScore: number | null;
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

/** An {@link MlgymState} as JSON (what the loop records). */
export function stateJson(state: MlgymState): EnvState {
  const { openFile, ...session } = state.session;
  return {
    snapshot: { ...state.snapshot },
    session: { ...session, ...(openFile === undefined ? {} : { openFile }) },
    lastScore: state.lastScore,
  };
}

const recordedState = z.object({
  snapshot: z.object({
    id: z.string(),
    format: z.enum(["tree", "tar"]),
    path: z.string(),
    cwd: z.string(),
    bytes: z.number(),
    createdAtMs: z.number(),
  }),
  session: z.object({
    openFile: z.string().optional(),
    top: z.number(),
    cwd: z.string(),
    step: z.number().int(),
  }),
  lastScore: z.number().nullable(),
});

/** Reads a recorded state back, or throws naming what is wrong (the rollout then starts over). */
export function parseState(state: EnvState): MlgymState {
  const parsed = recordedState.safeParse(state);
  if (!parsed.success)
    throw new Error(
      `the recorded mlgym state is not one saveState wrote: ${parsed.error.issues[0]?.message}`,
    );
  const { openFile, ...session } = parsed.data.session;
  return {
    ...parsed.data,
    session: { ...session, ...(openFile === undefined ? {} : { openFile }) },
  };
}
