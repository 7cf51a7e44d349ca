import type { HarborTask } from "./task.ts";

/** One command's outcome in the agent's shell. `output` merges stdout and stderr. */
export interface CommandResult {
  output: string;
  exitCode: number;
  timedOut: boolean;
}

/** What the verifier sandbox left: the reward files' text and test.sh's output, or why it stopped. */
export interface VerifierRun {
  /** `/logs/verifier/reward.txt` and `reward.json` as test.sh wrote them (absent when it wrote none). */
  rewardText?: string;
  rewardJson?: string;
  /** The tail of test.sh's stdout and stderr (`/logs/verifier/test-stdout.txt`). */
  output: string;
  exitCode: number;
  /** test.sh ran past `[verifier] timeout_sec` and was killed with its sandbox. */
  timedOut: boolean;
  ms: number;
}

/** One rollout's sandbox of one task: the agent's shell, the oracle, and the verifier run after the episode. */
export interface HarborSandbox {
  readonly id: string;
  /** The directory the agent starts in (the image's WORKDIR). */
  readonly workdir: string;
  /** Runs a command in the agent's persistent shell; past `timeoutMs` every process it started is killed. */
  exec(command: string, timeoutMs: number): Promise<CommandResult>;
  /** Harbor's oracle agent: solution/ copied to /solution, `bash /solution/solve.sh` run as the agent, removed. */
  runSolution(timeoutMs: number): Promise<CommandResult>;
  /**
   * Runs tests/test.sh in a separate verifier sandbox over a copy of this sandbox's state now (tests copied in,
   * an empty /logs/verifier, `[verifier] user` and `env`), killed after `[verifier] timeout_sec`.
   */
  verify(): Promise<VerifierRun>;
  /** Bytes the agent has written to the sandbox's filesystem (for `storage_mb`); undefined when unknown. */
  writtenBytes(): Promise<number | undefined>;
  close(): Promise<void>;
}

/** Opens sandboxes of tasks; builds (or checks) what a task needs first. */
export interface HarborRuntime {
  readonly kind: "docker" | "local";
  /** Builds the task's image (cached by content hash) or checks it can run here; throws a HarborTaskError. */
  prepare(task: HarborTask): Promise<void>;
  open(task: HarborTask, options: { rolloutId: string; signal?: AbortSignal }): Promise<HarborSandbox>;
  close(): Promise<void>;
}
