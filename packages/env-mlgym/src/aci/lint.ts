import type { Sandbox } from "@air/sandbox";
import { shellQuote } from "@air/sandbox";
import { IO_TIMEOUT_MS } from "./io.ts";

/** The checks MLGym's editor runs on Python files: undefined names, bad indentation, syntax and I/O errors. */
export const LINT_SELECT = "F821,F822,F831,E111,E112,E113,E999,E902";

/** One linter message: `path:line:col: problem`. */
export interface LintError {
  file: string;
  line: number;
  col: number;
  problem: string;
}

/** Parses one `path:line[:col]: problem` line; undefined for lines that are not linter messages. */
export function parseLintLine(text: string): LintError | undefined {
  const at = text.indexOf(": ");
  const prefix = at < 0 ? text : text.slice(0, at);
  const problem = at < 0 ? "" : text.slice(at + 2);
  const parts = prefix.split(":");
  if (parts.length !== 2 && parts.length !== 3) return undefined;
  const line = Number(parts[1]);
  const col = parts.length === 3 ? Number(parts[2]) : 0;
  if (!Number.isInteger(line) || !Number.isInteger(col)) return undefined;
  return { file: parts[0] ?? "", line, col, problem };
}

function parseLint(output: string): LintError[] {
  return output
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .flatMap((l) => parseLintLine(l) ?? []);
}

/**
 * The errors an edit introduced, as `- <problem>` lines ("" when none). Errors that existed before the edit are
 * ignored: those above the edited lines keep their numbers, those below move by the edit's change in length,
 * and those inside the edited lines are never ignored.
 * @example newLintErrors("a.py:3:1: F821 undefined name 'x'", "", [3, 3], 1) // "- F821 undefined name 'x'"
 */
export function newLintErrors(
  after: string,
  before: string,
  replaced: [number, number],
  newLineCount: number,
): string {
  const [first, last] = replaced;
  const shift = newLineCount - (last - first + 1);
  const known = parseLint(before).flatMap((e) => {
    if (e.line < first) return [e];
    if (e.line <= last) return [];
    return [{ ...e, line: e.line + shift }];
  });
  const same = (a: LintError, b: LintError) =>
    a.file === b.file && a.line === b.line && a.col === b.col && a.problem === b.problem;
  return parseLint(after)
    .filter((e) => !known.some((k) => same(k, e)))
    .map((e) => `- ${e.problem}`)
    .join("\n");
}

/**
 * Lints a Python file in the sandbox: flake8 with {@link LINT_SELECT} (stdout and stderr), or, when flake8 is
 * not installed there, a compile() check printed in flake8's format (E999 only).
 */
export async function lintFile(sandbox: Sandbox, python: string, path: string): Promise<string> {
  const q = shellQuote(path);
  const r = await sandbox.exec(
    `if command -v flake8 >/dev/null 2>&1; then flake8 --isolated --select=${LINT_SELECT} ${q} 2>&1; else echo AIR_NO_FLAKE8; fi`,
    IO_TIMEOUT_MS,
  );
  if (!r.output.startsWith("AIR_NO_FLAKE8")) return r.output.trim();
  const program = [
    "import sys",
    "try:",
    "    compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')",
    "except SyntaxError as e:",
    "    print(f'{sys.argv[1]}:{e.lineno or 1}:{e.offset or 1}: E999 {type(e).__name__}: {e.msg}')",
  ].join("\n");
  const c = await sandbox.exec(`${python} -c ${shellQuote(program)} ${q} 2>&1`, IO_TIMEOUT_MS);
  return c.output.trim();
}
