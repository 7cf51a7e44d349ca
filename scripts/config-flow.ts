#!/usr/bin/env bun
/**
 * How a run's config flows from the launcher's `launchRun` (issue 35 §2's measure), read from the source text.
 *
 * The walk: start in `launchRun`; in a function's body, every call of a function of packages/launcher/src (production
 * code, named or imported by name) that takes the config in some form (a parameter typed `RunConfig`, `RunPlan`,
 * `LaunchPlan` or `LaunchSession`) is a step of the config (a callee called twice by one function: one step); the walk follows each such callee's body once (depth
 * first, in source order). A step into a function of another file is a visit of that file; a visit of a file
 * the walk already visited is a return. (Control coming back from a callee to its caller is not counted.)
 *   bun scripts/config-flow.ts [--trace] [--src <a launcher src dir, e.g. an older commit's>]
 * Prints `visits N (files F), returns R` and, with --trace, each step `caller file → callee file (function)`.
 * `configFlow(src)` gives the same numbers to a test (packages/launcher/src/config-flow.test.ts ratchets them).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The launcher's own source dir, the one the measure reads unless told another. */
export const LAUNCHER_SRC = resolve(import.meta.dir, "../packages/launcher/src");
const CARRIES = /\b(RunConfig|RunPlan|LaunchPlan|PreflightPlan|LaunchSession)\b/;

interface Fn {
  file: string;
  name: string;
  params: string;
  body: string;
}

/** The text from `open` (an opening bracket) to its matching close, strings and comments skipped. */
function matched(text: string, open: number): number {
  const pair: Record<string, string> = { "(": ")", "{": "}", "[": "]" };
  const stack: string[] = [];
  for (let i = open; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"' || c === "'" || c === "`") {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === "\\") i++;
    } else if (c === "/" && text[i + 1] === "/") i = text.indexOf("\n", i);
    else if (c === "/" && text[i + 1] === "*") i = text.indexOf("*/", i) + 1;
    else if (pair[c]) stack.push(pair[c] as string);
    else if (c === stack.at(-1)) {
      stack.pop();
      if (stack.length === 0) return i;
    }
  }
  return text.length;
}

/** The config's flow from `launchRun` in the launcher source dir `src`: the steps (trace) and their counts. */
export function configFlow(src: string = LAUNCHER_SRC): {
  visits: number;
  files: number;
  returns: number;
  trace: string[];
} {
  const fns = new Map<string, Fn>(); // `${file}#${name}`
  const imports = new Map<string, Map<string, string>>(); // file → local name → `${file}#${name}`
  const files = readdirSync(src).filter(
    (f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.startsWith("test-"),
  );
  for (const file of files) {
    const text = readFileSync(join(src, file), "utf8");
    for (const m of text.matchAll(/^(?:export )?(?:async )?function (\w+)\s*(<[^(]*>)?\(/gm)) {
      const open = (m.index ?? 0) + m[0].length - 1;
      const close = matched(text, open);
      const bodyOpen = text.indexOf("{", close);
      const body = text.slice(bodyOpen, matched(text, bodyOpen) + 1);
      fns.set(`${file}#${m[1]}`, { file, name: m[1] as string, params: text.slice(open, close + 1), body });
    }
    const names = new Map<string, string>();
    for (const m of text.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+"\.\/([\w-]+\.ts)"/gm))
      for (const part of (m[1] as string).split(",")) {
        const [name, local] = part
          .replace(/^\s*type\s+/, "")
          .trim()
          .split(/\s+as\s+/);
        if (name) names.set((local ?? name).trim(), `${m[2]}#${name.trim()}`);
      }
    imports.set(file, names);
  }

  /** The functions `fn` calls that take the config, each once, in source order. */
  function callees(fn: Fn): Fn[] {
    const out: Fn[] = [];
    // comments dropped; a spread (`...f(x)`) is a call, a member (`a.f(x)`) is not
    const body = fn.body
      .replace(/\/\/.*$/gm, "")
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replaceAll("...", "   ");
    // a call `name(`, or a function passed by name (`[inferenceChild, trainer]`): both hand it the config
    for (const m of body.matchAll(/(?<![.\w])(\w+)\b(?!\s*:)/g)) {
      const name = m[1] as string;
      const key = imports.get(fn.file)?.get(name) ?? `${fn.file}#${name}`;
      const callee = fns.get(key);
      if (callee && callee !== fn && !out.includes(callee) && CARRIES.test(callee.params)) out.push(callee);
    }
    return out;
  }

  const start = fns.get("launch.ts#launchRun");
  if (!start) throw new Error("launchRun not found in launch.ts");
  const followed = new Set<Fn>([start]);
  const visited = new Set<string>([start.file]);
  const trace: string[] = [];
  let visits = 0;
  let returns = 0;
  function walk(fn: Fn): void {
    for (const callee of callees(fn)) {
      if (callee.file !== fn.file) {
        visits++;
        const again = visited.has(callee.file);
        if (again) returns++;
        visited.add(callee.file);
        trace.push(`${fn.file} → ${callee.file} (${callee.name})${again ? "  return" : ""}`);
      }
      if (followed.has(callee)) continue;
      followed.add(callee);
      walk(callee);
    }
  }
  walk(start);
  return { visits, files: visited.size - 1, returns, trace };
}

if (import.meta.main) {
  const at = process.argv.indexOf("--src");
  const flow = configFlow(at > 0 ? resolve(process.argv[at + 1] ?? ".") : LAUNCHER_SRC);
  if (process.argv.includes("--trace")) console.log(flow.trace.join("\n"));
  console.log(`visits ${flow.visits} (files ${flow.files}), returns ${flow.returns}`);
}
