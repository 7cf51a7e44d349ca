import type { Sandbox } from "@air/sandbox";
import { shellQuote } from "@air/sandbox";
import { IO_TIMEOUT_MS, pathKind } from "./io.ts";

/** The absolute path of an existing `path`, as the agent's shell resolves it. */
async function realpath(sandbox: Sandbox, path: string): Promise<string> {
  const r = await sandbox.exec(`realpath -- ${shellQuote(path)}`, IO_TIMEOUT_MS);
  return r.exitCode === 0 ? r.output.trim() : path;
}

/** The directory argument of search_dir/find_file (default `./`), or the error text when it is not a directory. */
async function searchRoot(sandbox: Sandbox, args: string[]): Promise<{ dir: string } | { error: string }> {
  const dir = args[1] ?? "./";
  if (args.length === 2 && (await pathKind(sandbox, dir)) !== "dir")
    return { error: `Directory ${dir} not found` };
  return { dir: await realpath(sandbox, dir) };
}

/**
 * `search_dir <term> [<dir>]`: files under dir (absolute paths) containing term, with match counts, as MLGym
 * prints them (a path is cut at its first blank, as MLGym's awk does).
 * @example await searchDir(sandbox, ["def main"]) // 'Found 2 matches for "def main" in /home/agent/workspace:...'
 */
export async function searchDir(sandbox: Sandbox, args: string[]): Promise<string> {
  if (args.length < 1 || args.length > 2) return "Usage: search_dir <search_term> [<dir>]";
  const [term = ""] = args;
  const root = await searchRoot(sandbox, args);
  if ("error" in root) return root.error;
  const r = await sandbox.exec(
    `find ${shellQuote(root.dir)} -type f ! -path '*/.*' -exec grep -nIH -- ${shellQuote(term)} {} + | cut -d: -f1 | sort | uniq -c`,
    IO_TIMEOUT_MS,
  );
  const rows = r.output
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((w) => w.length > 1)
    .map(([count, file]) => ({ count: Number(count), file: (file ?? "").replace(/^\.+\/+/, "./") }));
  if (rows.length === 0) return `No matches found for "${term}" in ${root.dir}`;
  if (rows.length > 100)
    return `More than ${rows.length} files matched for "${term}" in ${root.dir}. Please narrow your search.`;
  const total = rows.reduce((n, row) => n + row.count, 0);
  return [
    `Found ${total} matches for "${term}" in ${root.dir}:`,
    ...rows.map((row) => `${row.file} (${row.count} matches)`),
    `End of matches for "${term}" in ${root.dir}`,
  ].join("\n");
}

/**
 * `search_file <term> [<file>]`: matching lines of a file (default: the open file), with its absolute path.
 * @example await searchFile(sandbox, ["return"], "/w/a.py") // 'Found 1 matches for "return" in /w/a.py:\nLine 2:...'
 */
export async function searchFile(
  sandbox: Sandbox,
  args: string[],
  openFile: string | undefined,
): Promise<string> {
  const [term, fileArg] = args;
  if (!term) return "Usage: search_file <search_term> [<file>]";
  let file: string;
  if (fileArg) {
    if ((await pathKind(sandbox, fileArg)) !== "file")
      return `Usage: search_file <search_term> [<file>]\nError: File name ${fileArg} not found. Please provide a valid file name.`;
    file = fileArg;
  } else {
    if (!openFile) return "No file open. Use the open command first.";
    file = openFile;
  }
  file = await realpath(sandbox, file);
  const r = await sandbox.exec(`grep -n -- ${shellQuote(term)} ${shellQuote(file)}`, IO_TIMEOUT_MS);
  const hits = r.output.split("\n").filter(Boolean);
  if (hits.length === 0) return `No matches found for "${term}" in ${file}`;
  return [
    `Found ${hits.length} matches for "${term}" in ${file}:`,
    ...hits.map((h) => {
      const at = h.indexOf(":");
      return `Line ${h.slice(0, at)}:${h.slice(at + 1)}`;
    }),
    `End of matches for "${term}" in ${file}`,
  ].join("\n");
}

/**
 * `find_file <name> [<dir>]`: files whose name matches (shell glob), as absolute paths.
 * @example await findFile(sandbox, ["*.py"]) // 'Found 2 matches for "*.py" in /home/agent/workspace:\n/home/...'
 */
export async function findFile(sandbox: Sandbox, args: string[]): Promise<string> {
  if (args.length < 1 || args.length > 2) return "Usage: find_file <file_name> [<dir>]";
  const [name = ""] = args;
  const root = await searchRoot(sandbox, args);
  if ("error" in root) return root.error;
  const r = await sandbox.exec(
    `find ${shellQuote(root.dir)} -type f -name ${shellQuote(name)}`,
    IO_TIMEOUT_MS,
  );
  const hits = r.output.split("\n").filter(Boolean);
  if (hits.length === 0) return `No matches found for "${name}" in ${root.dir}`;
  return [`Found ${hits.length} matches for "${name}" in ${root.dir}:`, ...hits].join("\n");
}
