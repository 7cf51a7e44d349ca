import type { SnapshotStore } from "./snapshot-store.ts";

/** What a command run in a sandbox returned. `output` merges stdout and stderr in order. */
export interface ExecResult {
  output: string;
  exitCode: number;
  /** Working directory of the agent's shell after the command. */
  cwd: string;
  timedOut: boolean;
}

/** Files that make up a fresh workspace and the evaluation-only files of one task, on the host. */
export interface TaskFiles {
  /** Stable key of this bundle (task id + content hash); runtimes cache per key. */
  key: string;
  /**
   * Host directory with `workspace/` (becomes the agent's workspace) and `evaluation/` (pristine evaluation
   * scripts and secret files, laid over the copy of the workspace at evaluation time only).
   */
  dir: string;
  /**
   * Sub-paths of the workspace made read-only for the agent (e.g. "data", "evaluate.py"): shared from the bundle
   * by every sandbox, fork and evaluation, never copied, and what an evaluation reads is the bundle's pristine copy.
   */
  readOnly: string[];
}

/** An evaluation to run on a fresh copy of the workspace, as a user the agent is not. */
export interface EvaluationRequest {
  /** Shell command run in the evaluation directory, e.g. `python evaluate.py --submission_file submission.csv`. */
  command: string;
  timeoutMs: number;
}

export interface EvaluationOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
  timedOut: boolean;
}

/** One isolated place where one rollout's commands run. Never shared between concurrent rollouts. */
export interface Sandbox {
  readonly id: string;
  /** Absolute path of the workspace as the agent sees it. */
  readonly workspace: string;
  /** Runs one command in the agent's persistent shell; a command past `timeoutMs` is killed. */
  exec(command: string, timeoutMs: number): Promise<ExecResult>;
  /** Copies the workspace to a fresh evaluation directory, lays the pristine evaluation files over it, runs. */
  evaluate(request: EvaluationRequest): Promise<EvaluationOutput>;
  /**
   * Tar of the current workspace (for tree rollouts: `Runtime.acquire(..., { snapshot })`); it may leave out the
   * read-only paths, which come from the task bundle again.
   */
  snapshot(): Promise<Uint8Array>;
  /** True while the sandbox can run commands (a container that died mid-rollout is not alive). */
  alive(): Promise<boolean>;
}

export interface AcquireOptions {
  rolloutId: string;
  signal?: AbortSignal;
  /** Start from this workspace tar (from `Sandbox.snapshot`) instead of the task's fresh workspace. */
  snapshot?: Uint8Array;
  /**
   * Start as the stored snapshot `restore` was taken (`Runtime.saveSnapshot`): its workspace files with their
   * modes, and the shell in its working directory. Throws `SnapshotUnavailableError` when its files are gone.
   */
  restore?: SnapshotHandle;
}

/** Hands out sandboxes with a clean workspace for a task; `release` returns them (to a pool or the bin). */
export interface Runtime {
  readonly kind: "docker" | "local";
  acquire(files: TaskFiles, options: AcquireOptions): Promise<Sandbox>;
  /**
   * A new sandbox whose workspace is a copy of live `from`'s now, copied directly (tree rollouts). Optional: a
   * runtime without it is given `from.snapshot()` through `acquire`.
   */
  fork?(from: Sandbox, files: TaskFiles, options: AcquireOptions): Promise<Sandbox>;
  /** Gives a sandbox back; `discard` destroys it instead of pooling it. */
  release(sandbox: Sandbox, discard?: boolean): Promise<void>;
  close(): Promise<void>;
  /**
   * Stores `sandbox`'s state now into `store` under `id` (durable rollouts, `rl --resume`): its workspace without
   * the read-only paths (local: a tree of reflinked or copied files while its processes are stopped; docker: a
   * tar of what the agent's workspace holds, kept on this machine so any host restores it) and the shell's
   * working directory. Background processes and files outside the workspace are not carried.
   */
  saveSnapshot(sandbox: Sandbox, store: SnapshotStore, id: string): Promise<SnapshotHandle>;
}

/**
 * A stored snapshot of a sandbox (`Runtime.saveSnapshot`): plain JSON, kept in a run store and restored by
 * another process with `Runtime.acquire(files, { restore })`; listed and pruned through its `SnapshotStore`.
 */
export interface SnapshotHandle {
  /** Unique within its store: letters, digits, '.', '_', '-'. */
  id: string;
  /** "tree": a directory of the workspace's files (local runtime); "tar": a workspace tar (any runtime). */
  format: "tree" | "tar";
  /** Absolute path of the stored workspace on this machine. */
  path: string;
  /** The agent shell's working directory when it was taken. */
  cwd: string;
  /** Bytes of the stored files. */
  bytes: number;
  createdAtMs: number;
}
