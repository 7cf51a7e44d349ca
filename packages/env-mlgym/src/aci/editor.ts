import type { Sandbox } from "@air/sandbox";
import { shellQuote } from "@air/sandbox";
import { IO_TIMEOUT_MS, readLines, writeLines } from "./io.ts";
import { lintFile, newLintErrors } from "./lint.ts";
import { constrainLine, focusLine, renderView } from "./window.ts";

/** The agent's editor state: the open file and the viewer's current line (the middle of its window). */
export interface EditorState {
  file?: string;
  line: number;
  /** Scrolls in a row (a warning from the third on). */
  scrolls: number;
  /** The previous command, trimmed (a scroll after anything but a scroll starts a new count). */
  lastAction: string;
}

export interface EditorOptions {
  /** Lines shown per window (MLGym's WINDOW; its default agent config says 1000). */
  window: number;
  /** Interpreter used for the syntax check of edited Python files when flake8 is missing. */
  python: string;
  /** Files larger than this many characters cannot be opened at a line (use head/tail). */
  maxOpenChars: number;
}

/** Lines kept from the previous window when scrolling (MLGym's OVERLAP). */
export const OVERLAP = 2;

const SCROLL_WARNING =
  "\nWARNING: Scrolling many times in a row is very inefficient.\nIf you know what you are looking for, use `search_file <pattern>` instead.\n";
const RULE = "-------------------------------------------------";
const NUMBER = /^[0-9]+$/;

/** What is at a path for `open`: a file (image or not), a directory, or nothing. */
async function openKind(sandbox: Sandbox, path: string): Promise<"file" | "image" | "dir" | "none"> {
  const q = shellQuote(path);
  const r = await sandbox.exec(
    `if [ -f ${q} ]; then if file -b --mime-type ${q} 2>/dev/null | grep -qE image; then echo image; else echo file; fi; elif [ -d ${q} ]; then echo dir; else echo none; fi`,
    IO_TIMEOUT_MS,
  );
  const kind = r.output.trim();
  return kind === "file" || kind === "image" || kind === "dir" ? kind : "none";
}

/** The first word of `text` as bash's unquoted `$1` would give it (empty when none). */
function word(text: string | undefined): string {
  return (text ?? "").trim().split(/\s+/)[0] ?? "";
}

/**
 * MLGym's file viewer and editor (`open`, `goto`, `scroll_up`, `scroll_down`, `create`, `edit`, `insert`) with
 * its window arithmetic, messages and flake8 checks, implemented on the host over the sandbox's shell. Reads
 * and writes run as the agent.
 * @example const editor = new Editor(sandbox, { window: 1000, python: "python", maxOpenChars: 20000 });
 * await editor.open(["train.py"]);
 */
export class Editor {
  readonly state: EditorState = { line: 0, scrolls: 0, lastAction: "" };

  constructor(
    private readonly sandbox: Sandbox,
    private readonly options: EditorOptions,
  ) {}

  private view(file: string, lines: string[], line: number, window = this.options.window): string {
    return renderView(file, lines, constrainLine(line, lines.length, window), window);
  }

  /** Moves the current line to `line` (constrained to the file) and renders the window. */
  private async moveTo(line: number): Promise<string> {
    const file = this.state.file as string;
    const lines = await readLines(this.sandbox, file);
    this.state.line = constrainLine(line, lines.length, this.options.window);
    return renderView(file, lines, this.state.line, this.options.window);
  }

  async open(args: string[]): Promise<string> {
    const [path, lineArg] = args;
    if (!path) return 'Usage: open "<file>"';
    const kind = await openKind(this.sandbox, path);
    if (kind === "image")
      return `Error: ${path} is an image file. Current environment does not support image viewing.`;
    if (kind === "dir")
      return `Error: ${path} is a directory. You can only open files. Use cd or ls to navigate directories.`;
    if (kind === "none") return `File ${path} not found`;
    const window = this.options.window;
    const notes: string[] = [];
    let line = window / 2;
    if (lineArg) {
      if (!NUMBER.test(lineArg))
        return 'Usage: open "<file>" [<line_number>]\nError: <line_number> must be a number';
      const size = await this.sandbox.exec(`wc -c < ${shellQuote(path)}`, IO_TIMEOUT_MS);
      if (Number(size.output.trim()) > this.options.maxOpenChars) {
        return `The file is larger than ${this.options.maxOpenChars} characters, please use 'head -n NUM_LINES' to open it`;
      }
      const total = (await readLines(this.sandbox, path)).length;
      const wanted = Number(lineArg);
      if (wanted > total) {
        notes.push(
          `Warning: <line_number> (${lineArg}) is greater than the number of lines in the file (${total})`,
          `Warning: Setting <line_number> to ${total}`,
        );
        line = total;
      } else if (wanted < 1) {
        notes.push(
          `Warning: <line_number> (${lineArg}) is less than 1`,
          "Warning: Setting <line_number> to 1",
        );
        line = 1;
      } else {
        line = focusLine(wanted, window);
      }
    }
    const real = await this.sandbox.exec(`realpath -- ${shellQuote(path)}`, IO_TIMEOUT_MS);
    this.state.file = real.exitCode === 0 ? real.output.trim() : path;
    return [...notes, await this.moveTo(line)].join("\n");
  }

  async goto(args: string[]): Promise<string> {
    if (args.length > 1) return "goto allows only one line number at a time.";
    if (!this.state.file) return "No file open. Use the open command first.";
    const [arg] = args;
    if (!arg) return "Usage: goto <line>";
    if (!NUMBER.test(arg)) return "Usage: goto <line>\nError: <line> must be a number";
    const total = (await readLines(this.sandbox, this.state.file)).length;
    if (Number(arg) > total) return `Error: <line> must be less than or equal to ${total}`;
    return this.moveTo(focusLine(Number(arg), this.options.window));
  }

  async scroll(direction: 1 | -1): Promise<string> {
    if (!this.state.file) return "No file open. Use the open command first.";
    const view = await this.moveTo(this.state.line + direction * (this.options.window - OVERLAP));
    if (this.state.lastAction !== "scroll_up" && this.state.lastAction !== "scroll_down")
      this.state.scrolls = 0;
    this.state.scrolls++;
    return this.state.scrolls >= 3 ? `${view}\n${SCROLL_WARNING}` : view;
  }

  async create(args: string[]): Promise<string> {
    const [path] = args;
    if (!path) return "Usage: create <filename>";
    const q = shellQuote(path);
    const exists = await this.sandbox.exec(`[ -e ${q} ] || [ -L ${q} ]`, IO_TIMEOUT_MS);
    if (exists.exitCode === 0) return `Error: File '${path}' already exists.\n${await this.open([path])}`;
    const made = await this.sandbox.exec(`printf '\\n' > ${q}`, IO_TIMEOUT_MS);
    const opened = await this.open([path]);
    return made.output.trim() ? `${made.output.trim()}\n${opened}` : opened;
  }

  /** Why the open file cannot be written (MLGym's message), or undefined. Leaves no backup file behind. */
  private async readOnly(file: string): Promise<string | undefined> {
    const q = shellQuote(file);
    const slash = file.lastIndexOf("/");
    const backup = shellQuote(`${file.slice(0, slash + 1)}backup_${file.slice(slash + 1)}`);
    const r = await this.sandbox.exec(
      `if [ -w ${q} ] && cp ${q} ${backup} 2>/dev/null; then rm -f ${backup}; echo ok; fi`,
      IO_TIMEOUT_MS,
    );
    return r.output.trim() === "ok" ? undefined : `Error: You cannot edit read-only file ${file}`;
  }

  /**
   * `edit <start>:<end>` replaces lines start..end (inclusive) with `body`. Ranges past the end append; a Python
   * edit that adds flake8 errors (undefined names, bad indentation, syntax) is reverted and explained.
   */
  async edit(args: string[], body: string[]): Promise<string> {
    if (!this.state.file) return "No file open. Use the `open` command first.";
    const [startText = "", endText = ""] = `${word(args[0])}:`.split(":");
    if (!startText || !endText) return "Usage: edit <start_line>:<end_line>";
    if (!NUMBER.test(startText))
      return "Usage: edit <start_line>:<end_line>\nError: start_line must be a number";
    if (!NUMBER.test(endText)) return "Usage: edit <start_line>:<end_line>\nError: end_line must be a number";
    const start = Number(startText) - 1;
    const end = Number(endText);
    if (start < 0) return "Usage: edit <start_line>:<end_line>\nError: start_line must be at least 1";
    return this.change(start, end, body, "edit");
  }

  /** `insert <line>` inserts `body` after line `line` (0 = at the top, past the end = at the end). */
  async insert(args: string[], body: string[]): Promise<string> {
    if (!this.state.file) return "No file open. Use the `open` command first.";
    const text = word(args[0]);
    if (!text) return "Usage: insert <line_number>";
    if (!NUMBER.test(text)) return "Usage: insert <line_number>\nError: line_number must be a number";
    const after = Number(text);
    return this.change(after, after, body, "insert");
  }

  /** Replaces lines (from, to] (0-based from, 1-based to) with `body`, lints, keeps or reverts. */
  private async change(from: number, to: number, body: string[], kind: "edit" | "insert"): Promise<string> {
    const file = this.state.file as string;
    const python = file.endsWith(".py");
    const lintBefore = python ? await lintFile(this.sandbox, this.options.python, file) : "";
    const denied = await this.readOnly(file);
    if (denied) return denied;
    const before = await readLines(this.sandbox, file);
    const after = [...before.slice(0, from), ...body, ...before.slice(to)];
    const writeError = await writeLines(this.sandbox, file, after.length ? after : [""]);
    if (writeError) return `Error: You cannot edit read-only file ${file}\n${writeError}`;
    const n = body.length;
    const replaced: [number, number] = kind === "edit" ? [from + 1, to] : [from + 1, from + n];
    const errors = python
      ? newLintErrors(await lintFile(this.sandbox, this.options.python, file), lintBefore, replaced, n)
      : "";
    const written = after.length ? after : [""];
    if (!errors) {
      const view = await this.moveTo(kind === "edit" ? from : from + 1);
      return `${view}\nFile updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.`;
    }
    await writeLines(this.sandbox, file, before);
    const what = kind === "edit" ? "edit" : "insertion";
    const proposed =
      kind === "edit"
        ? this.view(file, written, Math.trunc(n / 2) + from, n + 10)
        : this.view(file, written, from + Math.trunc(n / 2), n + 10);
    const original =
      kind === "edit"
        ? this.view(file, before, Math.trunc((to - from + 1) / 2) + from, to - from + 10)
        : this.view(file, before, from, 10);
    return [
      kind === "edit"
        ? "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file."
        : "Your proposed insertion has introduced new syntax error(s). Please read this error message carefully and then retry inserting into the file.",
      "",
      "ERRORS:",
      errors,
      "",
      `This is how your ${what} would have looked if applied`,
      RULE,
      proposed,
      RULE,
      "",
      `This is the original code before your ${what}`,
      RULE,
      original,
      RULE,
      `Your changes have NOT been applied. Please fix your ${kind} command and try again.`,
      kind === "edit"
        ? "You either need to 1) Specify the correct start/end line arguments or 2) Correct your edit code."
        : "You either need to 1) Specify the correct line number argument or 2) Correct your insertion code.",
      `DO NOT re-run the same failed ${kind} command. Running it again will lead to the same error.`,
    ].join("\n");
  }
}
