import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import type { Message } from "@air/core";
import YAML from "yaml";
import { loadDemonstrations } from "./mlgym-demos.ts";
import { pyFormat } from "./py-format.ts";

/** One file of the agent config's `command_files`, and how MLGym installs it. */
export interface ToolFile {
  name: string;
  contents: string;
  /** source: a `.sh` file sourced into the shell; script: made executable on PATH (without its extension); utility: copied. */
  kind: "source" | "script" | "utility";
}

/** A command documented by a `# @yaml` block above its function. */
export interface ToolCommand {
  name: string;
  docstring?: string;
  signature?: string;
  endName?: string;
  arguments?: Record<string, { type?: string; description?: string; required?: boolean }>;
}

/** What air needs of an MLGym agent config (configs/agents/*.yaml) and its tools, read at run time. */
export interface MlgymAgent {
  file: string;
  systemTemplate: string;
  taskTemplate: string;
  nextStepTemplate: string;
  nextStepNoOutputTemplate: string;
  /** The config's `output_parser` (MLGym's default: ThoughtActionParser). */
  outputParser: string;
  /** Shown on a malformed reply: the config's `format_error_template`, else its `output_parser`'s message. */
  formatErrorTemplate?: string;
  stateCommand: { name: string; code: string };
  envVariables: Record<string, string>;
  files: ToolFile[];
  commands: ToolCommand[];
  /** The `command_docs` of the system prompt. */
  commandDocs: string;
  /** Messages between the system prompt and the task: the config's `demonstrations` (see loadDemonstrations). */
  demonstrations: Message[];
  /** The aliases file MLGym's README passes (`dockerfiles/aliases.sh`), when the checkout has it. */
  aliases?: string;
}

/** True when `root` looks like an MLGym checkout (its agent configs and tools are there). */
export function isMlgymCheckout(root: string): boolean {
  return existsSync(join(root, "configs", "agents", "default.yaml")) && existsSync(join(root, "tools"));
}

/** The commands documented in a bash file: `# ` comment lines (a `@yaml` block) right above `name() {`. */
export function parseToolCommands(contents: string): ToolCommand[] {
  const lines = contents.split("\n");
  const commands: ToolCommand[] = [];
  let docs: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith("# ")) docs.push(line.slice(2));
    else if (line.trim().endsWith("() {")) {
      const name = (line.split(/\s+/)[0] ?? "").slice(0, -2);
      while (i + 1 < lines.length && (lines[i + 1] as string).trim() !== "}") i++;
      i++;
      const doc = YAML.parse(docs.join("\n").replace("@yaml", "")) as Record<string, unknown> | null;
      const command: ToolCommand = { name };
      if (doc) {
        command.docstring = doc.docstring as string | undefined;
        command.endName = doc.end_name as string | undefined;
        command.arguments = doc.arguments as ToolCommand["arguments"];
        command.signature = doc.signature as string | undefined;
      }
      commands.push(command);
      docs = [];
    }
  }
  return commands;
}

function signatureOf(command: ToolCommand): string {
  if (command.signature) return command.signature;
  let out = command.name;
  for (const [param, settings] of Object.entries(command.arguments ?? {}))
    out += settings.required ? ` <${param}>` : ` [<${param}>]`;
  return out;
}

/**
 * `command_docs` as MLGym's detailed parser writes them: per command its name, docstring (formatted with the
 * env variables), signature and arguments.
 */
export function commandDocs(commands: ToolCommand[], env: Record<string, string>): string {
  let docs = "";
  for (const c of commands) {
    docs += `${c.name}:\n`;
    if (c.docstring !== undefined && c.docstring !== null)
      docs += `  docstring: ${pyFormat(c.docstring, env)}\n`;
    docs += `  signature: ${signatureOf(c)}\n`;
    if (c.arguments) {
      docs += "  arguments:\n";
      for (const [param, s] of Object.entries(c.arguments))
        docs += `    - ${param} (${s.type}) [${s.required ? "required" : "optional"}]: ${s.description}\n`;
    }
    docs += "\n";
  }
  return docs;
}

/** Python's textwrap.dedent: removes the indentation all non-blank lines share; blank lines become empty. */
export function dedent(text: string): string {
  const lines = text.split("\n").map((l) => (l.trim() === "" ? "" : l));
  const indents = lines.filter((l) => l !== "").map((l) => /^[ \t]*/.exec(l)?.[0] ?? "");
  let common = indents[0] ?? "";
  for (const indent of indents) while (!indent.startsWith(common)) common = common.slice(0, -1);
  return lines.map((l) => l.slice(common.length)).join("\n");
}

/**
 * The format error message of the agent config's `output_parser`, read from the checkout's
 * `mlgym/agent/parsing.py` (its `_error_message`, dedented as MLGym does); undefined when not found.
 */
export async function parserErrorMessage(root: string, parser: string): Promise<string | undefined> {
  const file = join(root, "mlgym", "agent", "parsing.py");
  if (!existsSync(file)) return undefined;
  const source = await readFile(file, "utf8");
  const start = source.search(new RegExp(`^class ${parser}\\b`, "m"));
  if (start < 0) return undefined;
  const next = source.slice(start + 1).search(/^class /m);
  const body = next < 0 ? source.slice(start) : source.slice(start, start + 1 + next);
  const match = /_error_message = """\\?\n?([\s\S]*?)"""/.exec(body);
  return match ? dedent(match[1] ?? "") : undefined;
}

/** Python's str() of a YAML scalar, as MLGym writes `K=V` lines for its env variables. */
function pyStr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  return String(value);
}

/**
 * Reads an MLGym agent config and its tool files from an MLGym checkout (nothing of MLGym is bundled with air).
 * @example const agent = await loadMlgymAgent("/src/MLGym"); agent.envVariables.WINDOW // "1000"
 */
export async function loadMlgymAgent(
  root: string,
  configPath = "configs/agents/default.yaml",
): Promise<MlgymAgent> {
  const file = resolve(root, configPath);
  const config = YAML.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  const tools = (config.tools ?? {}) as Record<string, unknown>;
  const state = (tools.state_command ?? {}) as { name?: string; code?: string };
  const envVariables = Object.fromEntries(
    Object.entries((tools.env_variables ?? {}) as Record<string, unknown>).map(([k, v]) => [k, pyStr(v)]),
  );
  const files: ToolFile[] = [];
  const commands: ToolCommand[] = [];
  for (const path of (tools.command_files ?? []) as string[]) {
    const contents = await readFile(resolve(root, path), "utf8");
    const name = basename(path);
    if (contents.trim().startsWith("#!")) {
      files.push({ name: name.replace(/\.[^.]*$/, ""), contents, kind: "script" });
      continue;
    }
    files.push({ name, contents, kind: name.endsWith(".sh") ? "source" : "utility" });
    if (name.endsWith(".sh"))
      commands.push(...parseToolCommands(contents).filter((c) => !c.name.startsWith("_")));
  }
  const template = (key: string) => config[key] as string | undefined;
  const task = template("task_template") ?? "";
  const next = template("next_step_template") ?? task;
  const aliasesFile = join(root, "dockerfiles", "aliases.sh");
  const parser = typeof config.output_parser === "string" ? config.output_parser : "ThoughtActionParser";
  return {
    file,
    systemTemplate: template("system_template") ?? "",
    taskTemplate: task,
    nextStepTemplate: next,
    nextStepNoOutputTemplate: template("next_step_no_output_template") ?? next,
    outputParser: parser,
    formatErrorTemplate: template("format_error_template") ?? (await parserErrorMessage(root, parser)),
    stateCommand: { name: state.name ?? "state", code: state.code ?? "" },
    envVariables,
    files,
    commands,
    commandDocs: commandDocs(commands, envVariables),
    demonstrations: await loadDemonstrations(root, config),
    aliases: existsSync(aliasesFile) ? await readFile(aliasesFile, "utf8") : undefined,
  };
}
