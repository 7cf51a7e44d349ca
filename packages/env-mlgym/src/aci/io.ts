import type { Sandbox } from "@air/sandbox";
import { shellQuote } from "@air/sandbox";

/** A file the editor refuses to load. */
export class FileTooLargeError extends Error {}

/** Short timeout for the editor's own file reads and writes. */
export const IO_TIMEOUT_MS = 30_000;

/** What is at `path`: a file, a directory, or nothing. */
export async function pathKind(sandbox: Sandbox, path: string): Promise<"file" | "dir" | "none"> {
  const q = shellQuote(path);
  const r = await sandbox.exec(
    `if [ -f ${q} ]; then echo file; elif [ -d ${q} ]; then echo dir; else echo none; fi`,
    IO_TIMEOUT_MS,
  );
  const kind = r.output.trim();
  return kind === "file" || kind === "dir" ? kind : "none";
}

/** Files larger than this are not loaded into the editor. */
export const MAX_EDITOR_BYTES = 1_000_000;

/** The file's lines (without their newline characters); throws for files over {@link MAX_EDITOR_BYTES}. */
export async function readLines(sandbox: Sandbox, path: string): Promise<string[]> {
  const q = shellQuote(path);
  const r = await sandbox.exec(
    `if [ "$(stat -c %s -- ${q})" -gt ${MAX_EDITOR_BYTES} ]; then echo AIR_TOO_BIG; else base64 -w0 -- ${q}; fi`,
    IO_TIMEOUT_MS,
  );
  if (r.output.startsWith("AIR_TOO_BIG")) {
    throw new FileTooLargeError(
      `${path} is larger than ${MAX_EDITOR_BYTES} bytes; use head, tail or grep on it`,
    );
  }
  if (r.exitCode !== 0) throw new Error(r.output.trim() || `cannot read ${path}`);
  const text = Buffer.from(r.output.trim(), "base64").toString("utf8");
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** Writes `lines` as the agent (so read-only files stay read-only); returns an error text or undefined. */
export async function writeLines(
  sandbox: Sandbox,
  path: string,
  lines: string[],
): Promise<string | undefined> {
  const text = lines.length ? `${lines.join("\n")}\n` : "";
  const b64 = Buffer.from(text, "utf8").toString("base64");
  const r = await sandbox.exec(`printf '%s' '${b64}' | base64 -d > ${shellQuote(path)}`, IO_TIMEOUT_MS);
  return r.exitCode === 0 ? undefined : r.output.trim() || `cannot write ${path}`;
}
