import { basename } from "node:path";
import {
  type Action,
  AirError,
  type EnvSession,
  type Generation,
  type Message,
  type StepResult,
} from "@air/core";
import type { Runtime, Sandbox } from "@air/sandbox";
import { shellQuote } from "@air/sandbox";
import { Editor } from "./aci/editor.ts";
import { FileTooLargeError } from "./aci/io.ts";
import type { MlgymAgent } from "./aci/mlgym-agent.ts";
import { MLGYM_PARSERS, type MlgymParserName, parseMlgymReply } from "./aci/mlgym-parser.ts";
import { mlgymObservation, mlgymSystemPrompt, mlgymTaskPrompt, pyDict } from "./aci/mlgym-prompts.ts";
import { MlgymToolsShell } from "./aci/mlgym-shell.ts";
import { footer, observation } from "./aci/observation.ts";
import { blockedName, MALFORMED_EDIT, malformedEdit, parseCommand } from "./aci/parse.ts";
import { systemPrompt, taskPrompt } from "./aci/prompts.ts";
import { findFile, searchDir, searchFile } from "./aci/search.ts";
import { ShellSetup } from "./aci/shell-setup.ts";
import { commandTimeouts } from "./command-timeouts.ts";
import type { MlgymConfig } from "./config.ts";
import { evaluateTask } from "./evaluation.ts";
import { type TamperContext, tamperContext, tamperFlags } from "./tamper.ts";
import type { Task } from "./task.ts";

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
  /** Opens a new session of the same task from a snapshot (set by the env plugin; makes `fork()` work). */
  reopen?: (snapshot: SessionSnapshot) => Promise<MlgymSession>;
}

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
    const flags = tamperFlags(this.tamper, {
      command,
      scores: result.scores,
      reference: this.lastScore,
    });
    const score = result.scores
      ? Object.entries(result.scores).find(
          ([k]) => k.toLowerCase() === this.tamper.priority.metric.toLowerCase(),
        )?.[1]
      : undefined;
    if (score !== undefined && Number.isFinite(score)) this.lastScore = score;
    const open = basename(this.tools ? this.toolsOpenFile : (this.editor.state.file ?? ""));
    const edits =
      /^\s*(?:edit|insert|append)\b/.test(command ?? "") && this.tamper.evaluationFiles.includes(open);
    const creates = /^\s*create\s+(\S+)/.exec(command ?? "");
    if (
      (edits || (creates && this.tamper.evaluationFiles.includes(basename(creates[1] as string)))) &&
      !flags.includes("writes-evaluation-file")
    )
      flags.push("writes-evaluation-file");
    return flags.length > 0 ? { ...result, info: { ...result.info, tamper: flags } } : result;
  }

  private templateState() {
    const remaining = Math.max(0, (this.options.config.max_steps ?? 10) - this.step_);
    return { step: this.step_, remaining, openFile: this.toolsOpenFile, cwd: this.cwd };
  }

  private prompt(): string {
    const remaining = Math.max(0, (this.options.config.max_steps ?? 10) - this.step_);
    return footer({ step: this.step_, remaining, openFile: this.editor.state.file, cwd: this.cwd });
  }

  private observe(output: string): string {
    const agent = this.options.mlgymAgent;
    if (agent) return mlgymObservation(agent, this.task, output, this.templateState());
    const remaining = Math.max(0, (this.options.config.max_steps ?? 10) - this.step_);
    const state = { step: this.step_, remaining, openFile: this.editor.state.file, cwd: this.cwd };
    return observation(output, state, this.options.config.max_observation_chars);
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
   * @example const sibling = await session.fork(); await sibling.step({ text: "", command: "ls" });
   */
  async fork(): Promise<EnvSession> {
    const reopen = this.options.reopen;
    if (!reopen) throw new AirError("ENV_FAILED", "this mlgym session was opened without a way to fork");
    return reopen({ ...this.state(), workspace: this.sandbox });
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

  async start(): Promise<Message[]> {
    const agent = this.options.mlgymAgent;
    if (agent && this.tools) {
      const state = await this.tools.state();
      this.toolsOpenFile = state.openFile;
      return [
        { role: "system", content: mlgymSystemPrompt(agent, this.task) },
        ...agent.demonstrations,
        { role: "user", content: mlgymTaskPrompt(agent, this.task, this.templateState()) },
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
      return {
        observation: this.observe(
          `Your output was not formatted correctly: ${why}. Reply with a DISCUSSION and exactly one command in a fenced code block.`,
        ),
        done: false,
        kind: "command",
        info: { formatError: true },
      };
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
    switch (aci) {
      case "validate":
      case "submit":
        return this.evaluate(aci);
      case "open":
        return text(await e.open(parsed.args));
      case "goto":
        return text(await e.goto(parsed.args));
      case "scroll_down":
        return text(await e.scroll(1));
      case "scroll_up":
        return text(await e.scroll(-1));
      case "create":
        return text(await e.create(parsed.args));
      case "edit":
        return text(await e.edit(parsed.args, parsed.body));
      case "insert":
        return text(await e.insert(parsed.args, parsed.body));
      case "search_dir":
        return text(await searchDir(this.sandbox, parsed.args));
      case "search_file":
        return text(await searchFile(this.sandbox, parsed.args, e.state.file));
      case "find_file":
        return text(await findFile(this.sandbox, parsed.args));
    }
    const blocked = blockedName(command);
    if (blocked) {
      return {
        observation: this.observe(
          `Operation '${blocked}' is not supported by this environment (it is interactive or not allowed).`,
        ),
        done: false,
        kind: "command",
        info: { blocked },
      };
    }
    const training = this.trainingCommand.test(command);
    const timeoutMs = Math.round((training ? this.task.trainingTimeoutS : this.commandTimeoutS) * 1000);
    await this.sandbox.exec(this.shellSetup.script, 30_000);
    const result = await this.sandbox.exec(command, timeoutMs);
    this.cwd = result.cwd || this.cwd;
    const call = result.timedOut ? undefined : this.shellSetup.evaluationCall(result.output);
    if (call) return this.evaluate(call);
    if (result.timedOut) {
      const message = `The command timed out after ${timeoutMs / 1000} s and was killed (with every process it started).`;
      return { observation: this.observe(message), done: false, kind: "command", toolError: message };
    }
    return {
      observation: this.observe(result.output),
      done: false,
      kind: "command",
      toolError: result.exitCode !== 0 ? `exit code ${result.exitCode}` : undefined,
      info: { exitCode: result.exitCode },
    };
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
    const output = result.timedOut
      ? `${result.output}\nEXECUTION TIMED OUT BECAUSE THE COMMAND WAS RUNNING FOR MORE THAN ${timeoutMs / 1000} SECONDS.`
      : result.output;
    return {
      observation: this.observe(output),
      done: false,
      kind: "command",
      toolError: result.timedOut
        ? "timed out"
        : result.exitCode !== 0
          ? `exit code ${result.exitCode}`
          : undefined,
      info: { exitCode: result.exitCode },
    };
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
    const ends = kind !== "validate";
    if (ends) this.done = true;
    if (!result.ok) {
      const output = ends ? `${result.error}\nThe episode has ended without a score.` : result.error;
      return {
        observation: this.observe(output),
        done: ends,
        kind,
        evaluationError: result.error,
        ...(ends ? { info: { exit } } : {}),
      };
    }
    const why = exit === "exit_format" ? "replies not in the expected format" : "no steps left";
    const lines = [
      kind === "validate"
        ? `Your code produced a valid submission artefact at ${result.artefact}.`
        : `Submitted the artefact at ${result.artefact}${kind === "auto_submit" ? ` (automatically: ${why})` : ""}.`,
      `Baseline Score: ${pyDict(this.task.baselineScores)}`,
      `Evaluation Score: ${pyDict(result.scores)}`,
    ];
    return {
      observation: this.observe(lines.join("\n")),
      done: ends,
      kind,
      scores: result.scores,
      ...(ends ? { info: { exit } } : {}),
    };
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
