import type { SnapshotHandle } from "./snapshot-handle.ts";
import type { SnapshotStore } from "./snapshot-store.ts";

export type { SnapshotHandle };

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
   * tree kept on this machine so any host restores it), the agent's /tmp and the shell's working directory (README:
   * what each runtime carries). Background processes are not carried.
   */
  saveSnapshot(sandbox: Sandbox, store: SnapshotStore, id: string): Promise<SnapshotHandle>;
}

// ---- Per-task environments (Harbor's task.toml), used by env-harbor ----
// Interfaces below merge into the ones above (TypeScript declaration merging): the additions stay in one block.

/** A context folder the runtime builds into the task's image on each engine it uses (see `ensureImage`). */
export interface TaskImageBuild {
  /** The build context with its `Dockerfile` (a Harbor task's `environment/`). */
  context: string;
  /** Repository of the built image's tag (`air-harbor/<task>`). */
  repo: string;
  /** `FROM` images replaced before building. */
  baseImages: Record<string, string>;
  timeoutMs: number;
  /** How the caller names the timeout in messages (`[environment] build_timeout_sec`). */
  timeoutKey?: string;
  labels?: Record<string, string>;
}

/**
 * What one task asks of its sandbox beyond its files (Harbor's task.toml `[environment]`, `[agent]`). With
 * `image` or `build` (docker), the image is the task's world: its WORKDIR is the workspace (the bundle's
 * `workspace/` is laid into it), the whole filesystem is the agent's state, and `evaluate` runs in a new
 * container of that state. Local: `workdir` is where the workspace is mounted, the rest of the system is the
 * host's, read-only.
 */
export interface TaskEnvironment {
  /** Docker: a prebuilt image in the engine's store (never pulled). */
  image?: string;
  /** Docker: a Dockerfile built into the image on each engine (cached by content and base image ids). */
  build?: TaskImageBuild;
  /** Absolute path of the workspace as the agent sees it; default the image's WORKDIR (docker), else the runtime's. */
  workdir?: string;
  /** Docker: the agent's user (default the image's USER, else root). Local: always the sandbox's own uid. */
  user?: string;
  /** Variables of the agent's shell, of `run` and of evaluations. */
  env?: Record<string, string>;
  cpus?: number;
  memoryMb?: number;
  /** Docker: `bridge` gives the task a network; default `none`. Local sandboxes never have one. */
  network?: "none" | "bridge";
  /** Empty directories, writable by the agent, that exist from the start (Harbor's /logs/agent). */
  dirs?: string[];
}

export interface TaskFiles {
  /** Per-task image, workdir, user, limits and network; absent: the runtime's own settings. */
  environment?: TaskEnvironment;
}

/** A host folder seen read-only (docker: copied in, root-owned) at an absolute path of the sandbox. */
export interface MountedFolder {
  src: string;
  dest: string;
}

export interface EvaluationRequest {
  /** Host folders the evaluation sees (Harbor's tests/ at /tests); never visible to the agent. */
  folders?: MountedFolder[];
  /** Docker with a task image: the user the command runs as (default the image's USER). */
  user?: string;
  /** Variables of the command (besides the task environment's). */
  env?: Record<string, string>;
  /**
   * A directory made empty (whatever the agent put there is gone) and writable before the command, and the
   * files of it read back after (`EvaluationOutput.collected`): Harbor's /logs/verifier and its reward files.
   */
  collect?: { dir: string; files: string[] };
}

export interface EvaluationOutput {
  /** The `collect.files` the command wrote (absent when it wrote none), by name. */
  collected?: Record<string, string>;
}

/** One command run as the agent in the sandbox's state with host folders visible for its duration. */
export interface RunRequest {
  command: string;
  timeoutMs: number;
  /** Seen read-only at their `dest` while the command runs (Harbor's oracle: solution/ at /solution). */
  folders: MountedFolder[];
  env?: Record<string, string>;
}

export interface Sandbox {
  /**
   * Runs a command as the agent with `folders` visible (local: a separate bwrap over the same workspace; docker:
   * copied in, removed after); what it changes in the workspace stays. The agent's shell is not used.
   */
  run?(request: RunRequest): Promise<ExecResult>;
  /** Bytes the agent has written (docker: the container's writable layer; local: the workspace), if known. */
  writtenBytes?(): Promise<number | undefined>;
}

export interface Runtime {
  /**
   * Makes ready what a task needs before its first sandbox (docker: its image built or found on every engine)
   * and returns a line saying what (`image air-harbor/t:3f2a…`, `local in /app`); throws naming what is missing.
   */
  prepareTask?(files: TaskFiles): Promise<string>;
}
