import { dirname, join } from "node:path";
import {
  commandStep,
  type EnvSession,
  type EnvState,
  type Generation,
  type Message,
  type StepResult,
} from "@air/core";
import {
  dropRollout,
  type Sandbox,
  type SessionSnapshots,
  SnapshotStore,
  saveTurn,
  shellQuote,
} from "@air/sandbox";
import type { HarborConfig } from "./config.ts";
import { resolveEnvVars } from "./env-vars.ts";
import { readRewardFiles } from "./reward.ts";
import type { HarborSandboxes } from "./sandboxes.ts";
import { type HarborState, stateJson } from "./session-state.ts";
import { HARBOR_PATHS, type HarborTask } from "./task.ts";

/** The reply that ends the episode and runs the verifier. */
export const SUBMIT = "submit";

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.7);
  const tail = max - head;
  return `${text.slice(0, head)}\n[... ${text.length - head - tail} of ${text.length} characters cut ...]\n${text.slice(-tail)}`;
}

/**
 * The system prompt of a Harbor episode: a terminal in the task's sandbox, one bash command per reply, `submit`
 * when done. States the agent's time budget when the task has one.
 */
export function harborSystemPrompt(task: HarborTask, workdir: string): string {
  const budget = task.config.agent.timeout_sec;
  return [
    "You are an agent working in a Linux terminal inside a sandbox. Each reply runs exactly one bash command,",
    "given in a fenced code block; you see its output (stdout and stderr) and exit code in return. The shell",
    `persists between commands (directory, variables). You start in ${workdir}.`,
    budget !== undefined ? `Your commands may run ${budget} seconds in all; then the episode ends.` : "",
    `When the task is done, reply with the command \`${SUBMIT}\`: the task's tests then check the sandbox's state.`,
  ]
    .filter(Boolean)
    .join("\n");
}

/** What the verifier sandbox left: the reward files' text and test.sh's output, or why it stopped. */
export interface VerifierRun {
  /** `/logs/verifier/reward.txt` and `reward.json` as test.sh wrote them (absent when it wrote none). */
  rewardText?: string;
  rewardJson?: string;
  /** The tail of test.sh's stdout and stderr (`/logs/verifier/test-stdout.txt`). */
  output: string;
  exitCode: number;
  /** test.sh ran past `[verifier] timeout_sec` and was stopped with its sandbox. */
  timedOut: boolean;
  ms: number;
}

/** test.sh as Harbor runs it (executable, else through bash), its output to `test-stdout.txt`. */
const TEST_COMMAND = `t=${HARBOR_PATHS.tests}/test.sh; { if [ -x "$t" ]; then "$t"; else bash "$t"; fi; } > ${HARBOR_PATHS.testStdout} 2>&1`;

export interface HarborSessionOptions {
  config: HarborConfig;
  /** The runtime the sandbox came from: it releases it, and forks it (tree rollouts). */
  sandboxes: HarborSandboxes;
  rolloutId: string;
  /** Where `saveState` stores the sandbox's snapshots (`rl --resume`); without it the session records no state. */
  snapshots?: SessionSnapshots;
  /** Called once with the episode's verifier outcome (for logs). */
  onVerified?: (info: Record<string, unknown>) => void;
}

/**
 * One Harbor episode: the task's instruction, bash commands in the agent's sandbox until `submit`, the
 * `[agent] timeout_sec` budget or the run's max turns, then the verifier (a separate sandbox) and its reward.
 * @example const s = new HarborSession(sandbox, task, { config }); await s.start(); await s.step({ text: "ls", command: "ls" });
 */
export class HarborSession implements EnvSession {
  private done = false;
  private usedMs = 0;
  private forks = 0;
  /** The agent's shell's directory after its last command (a fork starts there). */
  private cwd: string | undefined;

  constructor(
    readonly sandbox: Sandbox,
    readonly task: HarborTask,
    private readonly options: HarborSessionOptions,
  ) {}

  private get budgetMs(): number {
    const s = this.task.config.agent.timeout_sec;
    return s === undefined ? Number.POSITIVE_INFINITY : s * 1000;
  }

  async start(): Promise<Message[]> {
    if (this.options.config.oracle) {
      const started = Date.now();
      const timeoutMs = Math.min(this.budgetMs, this.options.config.command_timeout_sec * 1000);
      await this.runSolution(timeoutMs);
      this.usedMs += Date.now() - started;
    }
    return [
      { role: "system", content: harborSystemPrompt(this.task, this.sandbox.workspace) },
      { role: "user", content: this.task.instruction },
    ];
  }

  async step(action: Generation["action"]): Promise<StepResult> {
    if (this.done) return { observation: "The episode has ended.", done: true, kind: "command" };
    const command = action.command?.trim();
    if (action.parseError || !command) {
      const why = action.parseError ?? "no command found in your reply";
      return {
        observation: `Your reply was not formatted correctly: ${why}. Reply with exactly one bash command in a fenced code block.`,
        done: false,
        kind: "command",
        info: { formatError: true },
      };
    }
    if (command === SUBMIT) return this.verify("submit");
    const left = this.budgetMs - this.usedMs;
    const timeoutMs = Math.max(1, Math.min(left, this.options.config.command_timeout_sec * 1000));
    const started = Date.now();
    const result = await this.sandbox.exec(action.command ?? "", timeoutMs);
    this.usedMs += Date.now() - started;
    this.cwd = result.cwd || this.cwd;
    const max = this.options.config.max_observation_chars;
    let observation = truncate(result.output, max);
    if (result.timedOut)
      observation += `\n[the command ran past ${Math.round(timeoutMs / 1000)} s and was killed]`;
    else observation += `\n[exit code ${result.exitCode}]`;
    if (this.usedMs >= this.budgetMs) {
      const ended = await this.verify(
        "auto_submit",
        `agent timeout: [agent] timeout_sec = ${this.task.config.agent.timeout_sec} used up`,
      );
      return { ...ended, observation: `${observation}\n${ended.observation}` };
    }
    const storage = await this.storageExceeded();
    if (storage) {
      const ended = await this.verify("auto_submit", storage);
      return { ...ended, observation: `${observation}\n${ended.observation}` };
    }
    return commandStep(observation, result);
  }

  /** Harbor's oracle agent: solution/ seen at /solution while `bash /solution/solve.sh` runs as the agent. */
  private async runSolution(timeoutMs: number): Promise<void> {
    if (!this.task.solution) return;
    if (!this.sandbox.run)
      throw new Error(`the ${this.options.sandboxes.kind} sandbox cannot run the oracle`);
    await this.sandbox.run({
      command: `bash ${HARBOR_PATHS.solution}/solve.sh`,
      timeoutMs,
      folders: [{ src: join(this.task.dir, "solution"), dest: HARBOR_PATHS.solution }],
      env: resolveEnvVars(this.task.config.solution.env),
    });
  }

  /**
   * Runs tests/test.sh as the verifier: the sandbox's evaluation over a copy of its state now (docker: a new
   * container of the committed filesystem; local: a bwrap over a copy of the WORKDIR), tests/ at /tests, an
   * empty /logs/verifier, `[verifier] user` and `env`, stopped after `[verifier] timeout_sec`.
   */
  async runVerifier(): Promise<VerifierRun> {
    const started = Date.now();
    const v = this.task.config.verifier;
    const out = await this.sandbox.evaluate({
      command: TEST_COMMAND,
      timeoutMs: v.timeout_sec * 1000,
      folders: [{ src: join(this.task.dir, "tests"), dest: HARBOR_PATHS.tests }],
      user: v.user === undefined ? undefined : String(v.user),
      env: resolveEnvVars(v.env),
      collect: { dir: HARBOR_PATHS.verifierLogs, files: ["reward.txt", "reward.json", "test-stdout.txt"] },
    });
    const ms = Date.now() - started;
    if (out.timedOut) return { output: "", exitCode: 137, timedOut: true, ms };
    const c = out.collected ?? {};
    const output = (c["test-stdout.txt"] ?? out.stderr).slice(-20_000);
    return {
      rewardText: c["reward.txt"],
      rewardJson: c["reward.json"],
      output,
      exitCode: out.exitCode,
      timedOut: false,
      ms,
    };
  }

  private async storageExceeded(): Promise<string | undefined> {
    if (!this.options.config.docker.storage_check) return undefined;
    const bytes = await this.sandbox.writtenBytes?.();
    const limit = this.task.config.environment.storage_mb;
    if (bytes === undefined || bytes <= limit * 1024 * 1024) return undefined;
    return `storage: the sandbox holds ${Math.round(bytes / 1048576)} MB written, over [environment] storage_mb = ${limit}`;
  }

  /** Runs the verifier and turns its reward files into scores; no reward file, or a timeout, scores 0 with why. */
  private async verify(kind: "submit" | "auto_submit", why?: string): Promise<StepResult> {
    this.done = true;
    const metric = this.options.config.metric;
    const run = await this.runVerifier();
    const reading = run.timedOut
      ? {
          ok: false as const,
          error: `verifier timeout: tests/test.sh ran past [verifier] timeout_sec = ${this.task.config.verifier.timeout_sec} s and was killed`,
        }
      : readRewardFiles({ text: run.rewardText, json: run.rewardJson });
    const missing = reading.ok && !(metric in reading.scores);
    const error = !reading.ok
      ? reading.error
      : missing
        ? `the verifier wrote no "${metric}" (env.metric)`
        : undefined;
    const scores =
      reading.ok && !missing ? reading.scores : { ...(reading.ok ? reading.scores : {}), [metric]: 0 };
    const info = {
      exit: why ?? kind,
      verifier: {
        exitCode: run.exitCode,
        timedOut: run.timedOut,
        ms: run.ms,
        output: run.output.slice(-2000),
      },
    };
    this.options.onVerified?.(info);
    const lines = [
      why ? `The episode ended (${why}).` : "Submitted.",
      error ? `No reward: ${error}. Reward 0.` : `Verifier scores: ${JSON.stringify(scores)}`,
    ];
    return { observation: lines.join("\n"), done: true, kind, scores, evaluationError: error, info };
  }

  async finish(): Promise<StepResult | undefined> {
    if (this.done) return undefined;
    return this.verify("auto_submit", "no turns left");
  }

  /**
   * A sibling session in this one's state now (tree rollouts): a new sandbox of this one's (docker: the committed
   * container; local: a copy of the WORKDIR), the agent's time used so far carried over; what either does
   * afterwards is not seen by the other. `info.rolloutId`: the tree node it plays (its snapshots go under that id).
   * @example const sibling = await session.fork(); await sibling.step({ text: "ls", command: "ls" });
   */
  async fork(info?: { rolloutId: string }): Promise<EnvSession> {
    const { sandboxes, rolloutId } = this.options;
    const id = info?.rolloutId ?? `${rolloutId}-fork${++this.forks}`;
    const sandbox = await sandboxes.fork(this.task, this.sandbox, id);
    const snapshots = this.options.snapshots && { ...this.options.snapshots, rolloutId: id };
    const sibling = new HarborSession(sandbox, this.task, { ...this.options, rolloutId: id, snapshots });
    if (this.cwd && this.cwd !== sandbox.workspace)
      sibling.cwd = (await sandbox.exec(`cd ${shellQuote(this.cwd)}`, 30_000)).cwd;
    sibling.usedMs = this.usedMs;
    sibling.done = this.done;
    return sibling;
  }

  /**
   * The session's state after turn `turnIndex` (`orchestrator.resume_rollouts`): the sandbox's stored snapshot
   * (`<rollout>-t<turn>`; those before the turn before go: a kill before the store
   * records this turn resumes from that one) and the agent's time used.
   */
  async saveState(turnIndex: number): Promise<EnvState> {
    const snaps = this.options.snapshots;
    if (!snaps) throw new Error("this harbor session was opened without a snapshot store");
    const snapshot = await saveTurn(this.options.sandboxes.runtime, this.sandbox, snaps, turnIndex);
    return stateJson({ snapshot, usedMs: this.usedMs });
  }

  /** The rollout ended: its snapshots go (also those in the store it was restored from, when that is another). */
  async dropState(): Promise<void> {
    if (this.options.snapshots) await dropRollout(this.options.snapshots, this.restoredFrom);
  }
  private restoredFrom: SnapshotStore | undefined;

  /** Continues a recorded state (`saveState`) in this session, whose sandbox was restored from its snapshot. */
  resumeFrom(state: HarborState): void {
    this.usedMs = state.usedMs;
    this.cwd = state.snapshot.cwd;
    const dir = dirname(state.snapshot.path);
    if (dir !== this.options.snapshots?.store.dir) this.restoredFrom = new SnapshotStore(dir);
  }

  async close(): Promise<void> {
    await this.options.sandboxes.release(this.sandbox);
  }
}
