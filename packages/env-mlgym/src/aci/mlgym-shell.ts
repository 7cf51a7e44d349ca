import type { Sandbox } from "@air/sandbox";
import { SHELL_RESTARTED, shellQuote } from "@air/sandbox";
import { IO_TIMEOUT_MS } from "./io.ts";
import type { MlgymAgent } from "./mlgym-agent.ts";
import { cleanOutput } from "./observation.ts";
import { malformedEdit } from "./parse.ts";

/** What one agent command did in a shell with MLGym's tools. */
export interface ToolsResult {
  /** Cleaned output (MLGym's post-processing); undefined when an evaluation was asked for. */
  output: string;
  evaluation?: "validate" | "submit";
  timedOut: boolean;
  exitCode: number;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * MLGym's multi-line guard: the body of a command with an end marker (`edit … end_of_edit`) becomes a heredoc
 * (`edit 1:2 << 'end_of_edit'`), with MLGym's quirks kept (the submit pattern ends at a line `None`, and a
 * block that does not start the remaining text loses its first `start` characters).
 * @example guardMultiline("edit 1:1\nx\nend_of_edit", { edit: "end_of_edit" }) // "edit 1:1 << 'end_of_edit'\nx\nend_of_edit"
 */
export function guardMultiline(action: string, endings: Record<string, string>, submitEnd = "None"): string {
  const patterns = [
    ...Object.entries(endings).map(([name, end]) => ({ name, end })),
    { name: "submit", end: submitEnd },
  ].map(
    ({ name, end }) =>
      new RegExp(`^\\s*(${escapeRegExp(name)})\\s*([\\s\\S]*?)^(${escapeRegExp(end)})\\s*$`, "m"),
  );
  const parsed: string[] = [];
  let rest = action;
  while (rest.trim()) {
    const matches = patterns
      .map((p) => p.exec(rest))
      .filter((m): m is RegExpExecArray => m !== null)
      .sort((a, b) => a.index - b.index);
    const m = matches[0];
    if (!m) {
      parsed.push(rest);
      break;
    }
    const pre = rest.slice(0, m.index);
    const block = rest.slice(m.index, m.index + m[0].length);
    rest = rest.slice(m.index + m[0].length);
    if (pre.trim()) parsed.push(pre);
    if (!block.trim()) continue;
    const eof = (m[3] ?? "").trim();
    if ((block.split("\n")[0] ?? "").trim().endsWith(`<< '${eof}'`)) {
      parsed.push(block);
      continue;
    }
    const guarded = block.slice(m.index);
    const first = guarded.split("\n")[0] ?? "";
    parsed.push(guarded.replace(first, `${first} << '${eof}'`));
  }
  return parsed.join("\n");
}

/**
 * The agent's shell with an MLGym checkout's own tools sourced into it, as MLGym's environment and agent set
 * up their container shell (commands directory on PATH, aliases, env variables, state command, command files),
 * and its step path: multi-line guard, malformed-edit check, `bash -n`, run, clean, LAST_ACTION, markers.
 * @example const shell = new MlgymToolsShell(sandbox, agent); const r = await shell.run("ls", 25_000);
 */
export class MlgymToolsShell {
  private ready = false;
  /** Open file and current line put back when the tools are set up again (a replaced shell, a fork). */
  readonly carry: { openFile?: string; line?: number } = {};
  private readonly endings: Record<string, string>;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly agent: MlgymAgent,
  ) {
    this.endings = Object.fromEntries(
      agent.commands.filter((c) => c.endName).map((c) => [c.name, c.endName as string]),
    );
  }

  private async must(command: string): Promise<string> {
    const r = await this.sandbox.exec(command, IO_TIMEOUT_MS);
    if (r.exitCode !== 0)
      throw new Error(`setting up MLGym's tools failed (${command.slice(0, 60)}): ${r.output}`);
    return r.output;
  }

  /** Installs the tools in the shell (again after the shell was replaced), with {@link carry}'s file and line. */
  async setup(): Promise<void> {
    // MLGym's place ($HOME/commands); when the home is not writable (bwrap's), /tmp/mlgym-commands — the same one
    // each time the shell is replaced or restored, not one more per setup — or, when that is taken, a fresh one.
    const usable = (dir: string) => `{ mkdir -p ${dir} && [ -w ${dir} ] && [ ! -L ${dir} ]; } 2>/dev/null`;
    await this.must(
      `__air_tools="$HOME/commands"; ${usable('"$__air_tools"')} || { __air_tools=/tmp/mlgym-commands; ${usable("$__air_tools")}; } || __air_tools="$(mktemp -d /tmp/mlgym-commands.XXXXXX)"`,
    );
    const dir = '"$__air_tools"';
    // on PATH once: a restored shell comes back with the PATH it had (exported variables are carried)
    await this.must(
      `touch ${dir}/__init__.py && case ":$PATH:" in *":$__air_tools:"*) ;; *) export PATH="$PATH:$__air_tools" ;; esac`,
    );
    const write = (name: string, contents: string) =>
      this.must(
        `printf '%s' '${Buffer.from(contents).toString("base64")}' | base64 -d > ${dir}/${shellQuote(name)}`,
      );
    if (this.agent.aliases !== undefined) {
      await this.must("shopt -s expand_aliases");
      await write("bash_aliases.sh", this.agent.aliases);
      await this.must(`source ${dir}/bash_aliases.sh`);
    }
    await this.must(
      'export CURRENT_FILE="" && export CURRENT_LINE=0 && export SEARCH_RESULTS=() && export SEARCH_FILES=() && export SEARCH_INDEX=0',
    );
    const assignments = Object.entries(this.agent.envVariables).map(([k, v]) => `${k}=${v}`);
    await this.must([this.agent.stateCommand.code, ...assignments].join("\n"));
    for (const file of this.agent.files) {
      await write(file.name, file.contents);
      if (file.kind === "source") await this.must(`source ${dir}/${shellQuote(file.name)}`);
      if (file.kind === "script") await this.must(`chmod +x ${dir}/${shellQuote(file.name)}`);
    }
    const { openFile, line } = this.carry;
    if (openFile) await this.must(`export CURRENT_FILE=${shellQuote(openFile)}`);
    if (line !== undefined) await this.must(`export CURRENT_LINE=${line}`);
    this.ready = true;
  }

  /** Runs one agent command the way MLGym's environment does. */
  async run(command: string, timeoutMs: number): Promise<ToolsResult> {
    if (!this.ready) await this.setup();
    const action = guardMultiline(command, this.endings).trim();
    if (malformedEdit(action)) {
      return {
        output:
          "Malformed edit command. Please ensure you use the `end_of_edit` keyword to mark the end of your edit.",
        timedOut: false,
        exitCode: 0,
      };
    }
    const check = await this.sandbox.exec(`/bin/bash -n <<'EOF'\n${action}\nEOF\n`, IO_TIMEOUT_MS);
    if (check.exitCode !== 0)
      return { output: cleanOutput(check.output), timedOut: false, exitCode: check.exitCode };
    const result = await this.sandbox.exec(action, timeoutMs);
    if (result.timedOut || result.output.includes(SHELL_RESTARTED)) this.ready = false;
    else {
      await this.sandbox.exec(`export LAST_ACTION=${shellQuote(action.trim())}`, IO_TIMEOUT_MS);
      const line = Number((await this.sandbox.exec('printf %s "$CURRENT_LINE"', IO_TIMEOUT_MS)).output);
      if (Number.isFinite(line)) this.carry.line = line;
    }
    const raw = result.output;
    const evaluation = /<<VALIDATION\|\|[\s\S]*\|\|VALIDATION>>/.test(raw)
      ? "validate"
      : /<<SUBMISSION\|\|[\s\S]*\|\|SUBMISSION>>/.test(raw)
        ? "submit"
        : undefined;
    return { output: cleanOutput(raw), evaluation, timedOut: result.timedOut, exitCode: result.exitCode };
  }

  /** The state command's answer: the open file ("n/a" when none) and the working directory. */
  async state(): Promise<{ openFile: string; cwd: string }> {
    if (!this.ready) await this.setup();
    const r = await this.sandbox.exec(this.agent.stateCommand.name, IO_TIMEOUT_MS);
    try {
      const parsed = JSON.parse(r.output.trim()) as { open_file?: string; working_dir?: string };
      const openFile = parsed.open_file ?? "n/a";
      this.carry.openFile = openFile === "n/a" ? undefined : openFile;
      return { openFile, cwd: parsed.working_dir ?? r.cwd };
    } catch {
      return { openFile: "n/a", cwd: r.cwd };
    }
  }
}
