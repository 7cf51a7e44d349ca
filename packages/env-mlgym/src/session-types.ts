import type { EnvSession } from "@air/core";
import type { Sandbox, SessionSnapshots } from "@air/sandbox";
import type { MlgymAgent } from "./aci/mlgym-agent.ts";
import type { MlgymConfig } from "./config.ts";

/** A rollout's state at a turn, to start sibling rollouts from it (tree rollouts). */
export interface SessionSnapshot {
  /** Tar of the workspace, or (a fork) the live sandbox whose workspace the runtime copies directly. */
  workspace: Uint8Array | Sandbox;
  /** Open file and working directory, relative to the workspace when inside it. */
  openFile?: string;
  /** The viewer's current line (the middle of its window, MLGym's CURRENT_LINE). */
  top: number;
  cwd: string;
  /** Steps already taken. */
  step: number;
}

export interface SessionOptions {
  config: MlgymConfig;
  python: string;
  maxOpenChars?: number;
  /** `env.aci = "mlgym"`: the agent config and tools read from the MLGym checkout (else air's own commands). */
  mlgymAgent?: MlgymAgent;
  /** The task's evaluation noise from the run store's latest audit (feeds the `score-jump` tamper flag). */
  noise?: number;
  /** Where `saveState` stores the sandbox's snapshots (`rl --resume`); without it the session records no state. */
  snapshots?: SessionSnapshots;
  /**
   * Opens a new session of the same task from a snapshot, its snapshots stored under `rolloutId` when given (set by
   * the env plugin, on opened and restored sessions; makes `fork()` work).
   */
  reopen?: (snapshot: SessionSnapshot, rolloutId?: string) => Promise<EnvSession>;
}
