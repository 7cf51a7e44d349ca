import { type EnvState, z } from "@air/core";
import { type SnapshotHandle, snapshotHandleSchema } from "@air/sandbox";

/**
 * What a Harbor session records after each turn (`rl --resume`, `orchestrator.resume_rollouts`): its sandbox's
 * stored snapshot (`Runtime.saveSnapshot`: the WORKDIR's files and the shell's directory) and the agent's time
 * used so far (`[agent] timeout_sec` keeps counting across the resume).
 */
export interface HarborState {
  snapshot: SnapshotHandle;
  usedMs: number;
}

/** A {@link HarborState} as JSON (what the loop records). */
export function stateJson(state: HarborState): EnvState {
  return { snapshot: { ...state.snapshot }, usedMs: state.usedMs };
}

const recordedState = z.object({ snapshot: snapshotHandleSchema, usedMs: z.number().nonnegative() });

/** Reads a recorded state back, or throws naming what is wrong (the rollout then starts over). */
export function parseState(state: EnvState): HarborState {
  const parsed = recordedState.safeParse(state);
  if (!parsed.success)
    throw new Error(
      `the recorded harbor state is not one saveState wrote: ${parsed.error.issues[0]?.message}`,
    );
  return parsed.data;
}
