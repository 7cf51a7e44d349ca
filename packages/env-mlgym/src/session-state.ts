import { type EnvState, z } from "@air/core";
import { type SnapshotHandle, snapshotHandleSchema } from "@air/sandbox";
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

export { ofRollout, type SessionSnapshots, snapshotId } from "@air/sandbox";

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
  snapshot: snapshotHandleSchema,
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
