import { shellQuote } from "./shell.ts";
import type { Sandbox } from "./types.ts";

/** Variables a shell sets for itself: never carried, never unset. */
const OWN = new Set(["PWD", "OLDPWD", "SHLVL", "_"]);

/**
 * One `declare -<flags> NAME[=value]` entry of bash's `export -p`: the value double-quoted (`"…"`, newlines kept
 * as they are: bash ≤ 5.1) or ANSI-C quoted (`$'…'`: bash 5.2 for values with control characters).
 */
const ENTRY =
  /^declare -([a-zA-Z-]+) ([A-Za-z_][A-Za-z0-9_]*)(?:="((?:[^"\\]|\\[\s\S])*)"|=\$'((?:[^'\\]|\\[\s\S])*)')?$/gm;

const NAMED: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  v: "\v",
};

/**
 * The text of an ANSI-C quoted (`$'…'`) string's body, as bash reads it: `\nnn` and `\xHH` are bytes (bash writes
 * a non-ASCII character as its UTF-8 bytes in the C locale), the rest characters; the bytes read as UTF-8.
 */
function ansiC(body: string): string {
  const bytes: number[] = [];
  const text = (t: string) => bytes.push(...new TextEncoder().encode(t));
  const escapes =
    /\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|c(.)|([\s\S]))/g;
  let at = 0;
  for (const m of body.matchAll(escapes)) {
    text(body.slice(at, m.index));
    at = m.index + m[0].length;
    const [, octal, hex, u4, u8, control, other] = m;
    if (octal) bytes.push(Number.parseInt(octal, 8) & 0xff);
    else if (hex) bytes.push(Number.parseInt(hex, 16));
    else if (u4 || u8) text(String.fromCodePoint(Number.parseInt((u4 ?? u8) as string, 16)));
    else if (control) bytes.push(control.charCodeAt(0) & 0x1f);
    else text(NAMED[other as string] ?? (other as string));
  }
  text(body.slice(at));
  return new TextDecoder().decode(Uint8Array.from(bytes));
}

/**
 * The exported variables in bash's `export -p` text, by name: the value (`undefined` for a name exported without
 * one), read-only ones and those a shell sets for itself left out. Values are read back literally, never expanded.
 * @example parseExports('declare -x A="1 \\"2\\""\ndeclare -x B=$\'x\\ny\'\ndeclare -x C') // A → '1 "2"', B → "x\ny", C → undefined
 */
export function parseExports(text: string): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const m of text.matchAll(ENTRY)) {
    const [, flags, name, quoted, ansi] = m;
    if (!name || flags?.includes("r") || OWN.has(name)) continue;
    const value =
      quoted !== undefined
        ? quoted.replace(/\\([\\"$`])/g, "$1")
        : ansi !== undefined
          ? ansiC(ansi)
          : undefined;
    out.set(name, value);
  }
  return out;
}

/**
 * The agent shell's exported variables now (`builtin export -p`, so a function named `export` changes nothing),
 * carried by snapshots and forks: what `source venv/bin/activate` or `export CUDA_VISIBLE_DEVICES=0` set.
 * Undefined when the shell does not answer (the snapshot then carries none).
 * @example const exports = await readExports(sandbox); // 'declare -x HOME="/home/agent"\n…'
 */
export async function readExports(sandbox: Sandbox): Promise<string | undefined> {
  const out = await sandbox.exec("builtin export -p", 30_000).catch(() => undefined);
  // past the shell's output cap (4 MB) the middle is dropped: carrying part would unset the rest on restore
  if (out?.exitCode !== 0 || out.timedOut || DROPPED.test(out.output)) return undefined;
  return out.output;
}

/** What `SentinelShell` puts where it dropped the middle of a long output. */
const DROPPED = /^\[\.\.\. \d+ characters dropped \.\.\.\]$/m;

/**
 * Gives `sandbox`'s shell the exported variables of `saved` (a {@link readExports} text): each one whose value
 * differs now is exported with its value again (quoted, never expanded), and each exported now but not then is unset.
 * @example await applyExports(restored, handle.exports);
 */
export async function applyExports(sandbox: Sandbox, saved: string): Promise<void> {
  const want = parseExports(saved);
  const now = parseExports((await readExports(sandbox)) ?? "");
  const lines: string[] = [];
  for (const [name, value] of want) {
    if (now.has(name) && now.get(name) === value) continue;
    lines.push(value === undefined ? `export ${name}` : `export ${name}=${shellQuote(value)}`);
  }
  for (const name of now.keys()) if (!want.has(name)) lines.push(`unset -v ${name}`);
  if (lines.length === 0) return;
  const out = await sandbox.exec(lines.join("\n"), 30_000);
  if (out.exitCode !== 0 || out.timedOut)
    throw new Error(`cannot set the shell's exported variables again: ${out.output.slice(0, 200)}`);
}

/**
 * Gives `to`'s shell the exported variables `from`'s has now (forks: `Runtime.fork`).
 * @example await carryExports(parent, child);
 */
export async function carryExports(from: Sandbox, to: Sandbox): Promise<void> {
  const exports = await readExports(from);
  if (exports !== undefined) await applyExports(to, exports);
}
