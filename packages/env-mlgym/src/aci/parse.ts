/** A command string split into its ACI name, arguments and (for edit/insert) body lines. */
export interface ParsedCommand {
  name: string;
  args: string[];
  body: string[];
  /** For edit/insert: the body ended with its terminator line (MLGym refuses an edit without one). */
  terminated: boolean;
  raw: string;
}

/** Commands whose body follows on the next lines, with their terminators. */
export const BODY_TERMINATORS: Record<string, string> = { edit: "end_of_edit", insert: "end_of_insert" };

/** MLGym's blocklists: first word blocked anywhere / whole command blocked when alone. */
export const BLOCKLIST = ["vim", "vi", "emacs", "nano", "nohup", "git"];
export const BLOCKLIST_STANDALONE = [
  "python",
  "python3",
  "ipython",
  "bash",
  "sh",
  "exit",
  "/bin/bash",
  "/bin/sh",
  "nohup",
  "vi",
  "vim",
  "emacs",
  "nano",
  "su",
];

/** Splits a line into words, honouring single and double quotes. */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) words.push(m[1] ?? m[2] ?? m[3] ?? "");
  return words;
}

/**
 * Parses one command string. The first line names the command; for `edit`/`insert` the following lines up
 * to the terminator are the body. As in MLGym, the terminator line starts with `end_of_edit` / `end_of_insert`
 * (no indentation) and may have trailing blanks; an indented `end_of_edit` is part of the body.
 * @example parseCommand("edit 2:3\nx = 1\nend_of_edit") // { name: "edit", args: ["2:3"], body: ["x = 1"] }
 */
export function parseCommand(command: string): ParsedCommand {
  const raw = command.replace(/\r\n/g, "\n").replace(/^\n+/, "").replace(/\s+$/, "");
  const newline = raw.indexOf("\n");
  const first = newline < 0 ? raw : raw.slice(0, newline);
  const words = splitWords(first.trim());
  const name = words[0] ?? "";
  const terminator = BODY_TERMINATORS[name];
  let body: string[] = [];
  let terminated = false;
  if (terminator) {
    body = newline < 0 ? [] : raw.slice(newline + 1).split("\n");
    const end = body.findIndex((l) => l.trimEnd() === terminator);
    terminated = end >= 0;
    if (terminated) body = body.slice(0, end);
  }
  return { name, args: words.slice(1), body, terminated, raw };
}

/**
 * The blocked program's name, when `command` is blocked.
 * @example blockedName("vim a.py") // "vim"; blockedName("python train.py") // undefined
 */
export function blockedName(command: string): string | undefined {
  const trimmed = command.trim();
  const first = trimmed.split(/\s+/)[0] ?? "";
  if (BLOCKLIST.includes(first)) return first;
  if (BLOCKLIST_STANDALONE.includes(trimmed)) return trimmed;
  return undefined;
}

/** MLGym's answer to an `edit <n>:<m>` without its `end_of_edit` line (nothing runs). */
export const MALFORMED_EDIT =
  "Malformed edit command. Please ensure you use the `end_of_edit` keyword to mark the end of your edit.";

/**
 * True when `command` is an `edit <n>:<m>` that never says `end_of_edit` (MLGym's check, before anything runs).
 * @example malformedEdit("edit 1:2\nx = 1") // true
 */
export function malformedEdit(command: string): boolean {
  const trimmed = command.trim();
  return /^edit\s+\d+:\d+(?:\n|$|\s)/.test(trimmed) && !trimmed.includes("end_of_edit");
}
