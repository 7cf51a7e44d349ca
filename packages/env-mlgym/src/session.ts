import { dirname } from "node:path";
import {
  type Action,
  AirError,
  type EnvSession,
  type EnvState,
  type Generation,
  type Message,
  type StepResult,
} from "@air/core";
import type { Runtime, Sandbox } from "@air/sandbox";
import { dropRollout, SnapshotStore, saveTurn, shellQuote } from "@air/sandbox";
import { Editor } from "./aci/editor.ts";
import { editorCommand } from "./aci/editor-commands.ts";
import { FileTooLargeError } from "./aci/io.ts";
import { MLGYM_PARSERS, type MlgymParserName, parseMlgymReply } from "./aci/mlgym-parser.ts";
import { mlgymObservation, mlgymSystemPrompt, mlgymTaskPrompt } from "./aci/mlgym-prompts.ts";
import { MlgymToolsShell } from "./aci/mlgym-shell.ts";
import { footer, observation } from "./aci/observation.ts";
import { blockedName, MALFORMED_EDIT, malformedEdit, parseCommand } from "./aci/parse.ts";
import { systemPrompt, taskPrompt } from "./aci/prompts.ts";
import { ShellSetup } from "./aci/shell-setup.ts";
import { commandTimeouts } from "./command-timeouts.ts";
import { evaluateTask } from "./evaluation.ts";
import { type MlgymState, stateJson } from "./session-state.ts";
import { blockedStep, evaluationStep, formatErrorStep, shellStep, toolsStep } from "./session-steps.ts";
import { flagTurn } from "./session-tamper.ts";
import type { SessionOptions, SessionSnapshot } from "./session-types.ts";
import { type TamperContext, tamperContext } from "./tamper.ts";
import type { Task } from "./task.ts";

/**
 * One MLGym episode in one sandbox: MLGym-style prompts, the agent commands, validate/submit, auto-submit.
 * @example const session = new MlgymSession(runtime, sandbox, task, { config, python: "python" });
 * const messages = await session.start(); const r = await session.step({ text: "ls", command: "ls" });
 */
export class MlgymSession implements EnvSession {
  private step_ = 0;
  private cwd: string;
  private done = false;
  private broken = false;
  /** An evaluation ran agent code with the evaluator's privileges: the sandbox must not be reused. */
  private tainted = false;
  private readonly editor: Editor;
  private readonly trainingCommand: RegExp;
  private readonly commandTimeoutS: number;
  private readonly shellSetup = new ShellSetup();
  /** MLGym's own tools in the agent's shell (`env.aci = "mlgym"`), and the open file its state command reports. */
  private readonly tools?: MlgymToolsShell;
  private toolsOpenFile = "n/a";
  private readonly tamper: TamperContext;
  /** The episode's previous priority score (a `score-jump` is measured from it; the baseline before the first). */
  private lastScore: number | undefined;

  constructor(
    private readonly runtime: Runtime,
    readonly sandbox: Sandbox,
    readonly task: Task,
    private readonly options: SessionOptions,
  ) {
    this.cwd = sandbox.workspace;
    this.editor = new Editor(sandbox, {
      window: options.config.window,
      python: options.python,
      maxOpenChars: options.maxOpenChars ?? 20_000,
    });
    const timeouts = commandTimeouts(options.config, options.mlgymAgent !== undefined);
    this.trainingCommand = timeouts.trainingCommand;
    this.commandTimeoutS = timeouts.commandTimeoutS;
    if (options.mlgymAgent) this.tools = new MlgymToolsShell(sandbox, options.mlgymAgent);
    this.tamper = tamperContext(task, options.noise);
  }

  /** `result` with the turn's tamper flags in `info.tamper` (none: unchanged). */
  private flagged(command: string | undefined, result: StepResult): StepResult {
    const openFile = this.tools ? this.toolsOpenFile : (this.editor.state.file ?? "");
    const flagged = flagTurn(this.tamper, { command, result, reference: this.lastScore, openFile });
    if (flagged.score !== undefined) this.lastScore = flagged.score;
    return flagged.result;
  }

  /** Step, steps remaining, open file and directory as the footer shows them (`openFile`: whose editor). */
  private footerState<F extends string | undefined>(openFile: F) {
    const remaining = Math.max(0, (this.options.config.max_steps ?? 10) - this.step_);
    return { step: this.step_, remaining, openFile, cwd: this.cwd };
  }

  private prompt(): string {
    return footer(this.footerState(this.editor.state.file));
  }

  private observe(output: string): string {
    const agent = this.options.mlgymAgent;
    if (agent) return mlgymObservation(agent, this.task, output, this.footerState(this.toolsOpenFile));
    return observation(
      output,
      this.footerState(this.editor.state.file),
      this.options.config.max_observation_chars,
    );
  }

  /**
   * The episode's state now: workspace tar, open file, window, directory and step count.
   * @example const snap = await session.snapshot(); await env.open({ ...example, data: { ...example.data, snapshot: snap } }, info);
   */
  async snapshot(): Promise<SessionSnapshot & { workspace: Uint8Array }> {
    return { ...this.state(), workspace: await this.sandbox.snapshot() };
  }

  /** The open file, window, directory and step count (relative to the workspace when inside it). */
  private state(): Omit<SessionSnapshot, "workspace"> {
    const relative = (path: string) =>
      path === this.sandbox.workspace
        ? "."
        : path.startsWith(`${this.sandbox.workspace}/`)
          ? path.slice(this.sandbox.workspace.length + 1)
          : path;
    const toolsFile = this.toolsOpenFile === "n/a" ? undefined : this.toolsOpenFile;
    const file = this.tools ? toolsFile : this.editor.state.file;
    return {
      openFile: file === undefined ? undefined : relative(file),
      top: this.tools ? (this.tools.carry.line ?? 0) : this.editor.state.line,
      cwd: relative(this.cwd),
      step: this.step_,
    };
  }

  /**
   * A sibling session in this one's state (tree rollouts): a new sandbox with a copy of this workspace, with the
   * open file, window, directory and step count taken over. Needs `options.reopen` (the env plugin sets it).
   * `info.rolloutId`: the tree node it plays (its snapshots are stored under that id).
   * @example const sibling = await session.fork(); await sibling.step({ text: "", command: "ls" });
   */
  async fork(info?: { rolloutId: string }): Promise<EnvSession> {
    const reopen = this.options.reopen;
    if (!reopen) throw new AirError("ENV_FAILED", "this mlgym session was opened without a way to fork");
    return reopen({ ...this.state(), workspace: this.sandbox }, info?.rolloutId);
  }

  /** Takes over a {@link SessionSnapshot}'s open file, window, directory and step count (the workspace came with the sandbox). */
  async restore(snapshot: SessionSnapshot): Promise<void> {
    const absolute = (path: string) =>
      path.startsWith("/") ? path : `${this.sandbox.workspace}/${path}`.replace(/\/\.$/, "");
    if (snapshot.openFile !== undefined) {
      this.editor.state.file = absolute(snapshot.openFile);
      this.toolsOpenFile = absolute(snapshot.openFile);
      if (this.tools) this.tools.carry.openFile = absolute(snapshot.openFile);
    }
    if (this.tools) this.tools.carry.line = snapshot.top;
    this.editor.state.line = snapshot.top;
    this.step_ = snapshot.step;
    const cd = await this.sandbox.exec(`cd ${shellQuote(absolute(snapshot.cwd))}`, 30_000);
    this.cwd = cd.cwd || this.cwd;
  }

  /**
   * The state after turn `turnIndex` for `rl --resume`: the sandbox stored as a snapshot (the one two turns back
   * pruned: the store always holds the last recorded turn's), open file, window, directory, steps, last score.
   */
  async saveState(turnIndex: number): Promise<EnvState> {
    const snaps = this.options.snapshots;
    if (!snaps) throw new Error("this mlgym session was opened without a snapshot store");
    const snapshot = await saveTurn(this.runtime, this.sandbox, snaps, turnIndex);
    return stateJson({ snapshot, session: this.state(), lastScore: this.lastScore ?? null });
  }

  /** The rollout ended: its snapshots go (also those in the store it was restored from, when that is another). */
  async dropState(): Promise<void> {
    if (this.options.snapshots) await dropRollout(this.options.snapshots, this.restoredFrom);
  }
  private restoredFrom: SnapshotStore | undefined;

  /** Continues a recorded state (`saveState`) in this session, whose sandbox was restored from its snapshot. */
  async resumeFrom(state: MlgymState): Promise<void> {
    await this.restore({ ...state.session, workspace: new Uint8Array() });
    this.lastScore = state.lastScore ?? undefined;
    const dir = dirname(state.snapshot.path);
    if (dir !== this.options.snapshots?.store.dir) this.restoredFrom = new SnapshotStore(dir);
  }

  async start(): Promise<Message[]> {
    const agent = this.options.mlgymAgent;
    if (agent && this.tools) {
      const state = await this.tools.state();
      this.toolsOpenFile = state.openFile;
      return [
        { role: "system", content: mlgymSystemPrompt(agent, this.task) },
        ...agent.demonstrations,
        { role: "user", content: mlgymTaskPrompt(agent, this.task, this.footerState(this.toolsOpenFile)) },
      ];
    }
    return [
      { role: "system", content: systemPrompt(this.options.config.window, this.task.trainingTimeoutS) },
      { role: "user", content: taskPrompt(this.task.description, this.prompt()) },
    ];
  }

  /** With `aci = "mlgym"`: the agent config's format error, which the policy re-asks with (as MLGym's agent). */
  get formatErrorMessage(): string | undefined {
    return this.tools ? this.options.mlgymAgent?.formatErrorTemplate : undefined;
  }

  /**
   * With `aci = "mlgym"` and one of the output parsers air implements (MLGymThoughtActionParser,
   * ThoughtActionParser): the reply read exactly as that parser reads it. Otherwise the policy's own parser.
   */
  get parseReply(): ((text: string) => Action) | undefined {
    const parser = this.tools ? this.options.mlgymAgent?.outputParser : undefined;
    if (!parser || !(MLGYM_PARSERS as readonly string[]).includes(parser)) return undefined;
    return (text) => parseMlgymReply(text, parser as MlgymParserName);
  }

  async step(action: Generation["action"]): Promise<StepResult> {
    if (this.done) return { observation: "The episode has ended.", done: true, kind: "command" };
    this.step_++;
    // MLGym's agent sends `exit_format` once its re-asks are spent: the episode ends with an auto-submission
    // (an empty command is run, as MLGym runs it).
    if (this.tools && (action.parseError !== undefined || action.command === undefined)) {
      return this.flagged(undefined, await this.evaluate("auto_submit", "exit_format"));
    }
    if (!this.tools && (action.parseError || !action.command?.trim())) {
      const why = action.parseError ?? "no command found in your reply";
      return formatErrorStep(why, (output) => this.observe(output));
    }
    try {
      const result = this.flagged(action.command, await this.run(action.command ?? ""));
      if (!action.notes?.length) return result;
      const notes = action.notes.map((n) => `NOTE: ${n}`).join("\n");
      return { ...result, observation: `${notes}\n${result.observation}` };
    } catch (error) {
      if (!(await this.sandbox.alive())) {
        this.broken = true;
        throw new AirError(
          "ENV_FAILED",
          `sandbox ${this.sandbox.id} died mid-rollout: ${(error as Error).message}`,
          {
            plugin: "mlgym",
            hook: "step",
            cause: error,
          },
        );
      }
      throw error;
    }
  }

  private async run(command: string): Promise<StepResult> {
    if (this.tools) return this.runTools(this.tools, command);
    const parsed = parseCommand(command);
    const aci = parsed.name;
    const e = this.editor;
    const text = async (output: string): Promise<StepResult> => ({
      observation: this.observe(output),
      done: false,
      kind: "command",
      info: { aci },
    });
    try {
      if (malformedEdit(command)) return await text(MALFORMED_EDIT);
      return await this.runAci(aci, parsed, text, command);
    } catch (error) {
      if (error instanceof FileTooLargeError) return text(`Error: ${error.message}`);
      throw error;
    } finally {
      e.state.lastAction = command.trim();
    }
  }

  private async runAci(
    aci: string,
    parsed: ReturnType<typeof parseCommand>,
    text: (output: string) => Promise<StepResult>,
    command: string,
  ): Promise<StepResult> {
    const e = this.editor;
    if (aci === "validate" || aci === "submit") return this.evaluate(aci);
    const output = await editorCommand(e, this.sandbox, aci, parsed);
    if (output !== undefined) return text(output);
    const blocked = blockedName(command);
    if (blocked) return blockedStep(blocked, (output) => this.observe(output));
    const training = this.trainingCommand.test(command);
    const timeoutMs = Math.round((training ? this.task.trainingTimeoutS : this.commandTimeoutS) * 1000);
    await this.sandbox.exec(this.shellSetup.script, 30_000);
    const result = await this.sandbox.exec(command, timeoutMs);
    this.cwd = result.cwd || this.cwd;
    const call = result.timedOut ? undefined : this.shellSetup.evaluationCall(result.output);
    if (call) return this.evaluate(call);
    return shellStep(result, timeoutMs, (output) => this.observe(output));
  }

  /** One command in the shell with MLGym's own tools (`env.aci = "mlgym"`). */
  private async runTools(tools: MlgymToolsShell, command: string): Promise<StepResult> {
    const training = this.trainingCommand.test(command);
    const timeoutMs = Math.round((training ? this.task.trainingTimeoutS : this.commandTimeoutS) * 1000);
    const result = await tools.run(command, timeoutMs);
    const state = await tools.state();
    this.cwd = state.cwd || this.cwd;
    this.toolsOpenFile = state.openFile;
    if (result.evaluation) return this.evaluate(result.evaluation);
    return toolsStep(result, timeoutMs, (output) => this.observe(output));
  }

  /** Scores the artefact; `submit` and `auto_submit` end the episode (`exit` names why, as MLGym's `Exited (…)`). */
  private async evaluate(
    kind: "validate" | "submit" | "auto_submit",
    exit = kind === "auto_submit" ? "max_steps" : kind,
  ): Promise<StepResult> {
    if (this.task.evaluationRunsAgentCode) this.tainted = true;
    const result = await evaluateTask(this.sandbox, this.task, {
      python: this.options.python,
      timeoutMs: this.task.trainingTimeoutS * 1000,
      proxyCallTimeoutS: this.options.config.proxy_call_timeout_s,
    });
    if (kind !== "validate") this.done = true;
    return evaluationStep(this.task, result, kind, exit, (output) => this.observe(output));
  }

  async finish(): Promise<StepResult | undefined> {
    if (this.done) return undefined;
    return this.evaluate("auto_submit");
  }

  async close(): Promise<void> {
    const discard = this.broken || this.tainted || !(await this.sandbox.alive());
    await this.runtime.release(this.sandbox, discard);
  }
}
