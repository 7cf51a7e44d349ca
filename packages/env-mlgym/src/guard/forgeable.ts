import { existsSync, readFileSync } from "node:fs";
import { basename, sep } from "node:path";
import type { AuditFindings, CheckResult } from "@air/core";
import type { Task } from "../task.ts";

/** Top-level `.py` names the evaluation sees beside its script: trusted (evaluation scripts, pristine files) and hidden (secret files). */
export function guardNames(task: Task): { trusted: string[]; hidden: string[] } {
  const top = (p: string) => !p.includes("/") && p.endsWith(".py");
  const inData = (f: string) => task.datasets.some((d) => f.startsWith(d.dataPath + sep));
  return {
    trusted: [...new Set([...task.evaluationPaths, ...task.pristineFiles])].filter(top),
    hidden: task.secretFiles
      .filter((f) => !inData(f))
      .map((f) => basename(f))
      .filter(top),
  };
}

/** Top-level `.py` starter files of `task` by module name → host path. */
function starterModules(task: Task): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of task.starterCode) if (s.endsWith(".py")) out.set(basename(s).slice(0, -3), s);
  return out;
}

/** How `source` defines top-level `name`: "class", "function", "value", or undefined when it does not. */
function definition(source: string, name: string): "class" | "function" | "value" | undefined {
  if (new RegExp(`^class\\s+${name}\\b`, "m").test(source)) return "class";
  if (new RegExp(`^(?:async\\s+)?def\\s+${name}\\b`, "m").test(source)) return "function";
  if (new RegExp(`^${name}\\s*[:=]`, "m").test(source)) return "value";
  return undefined;
}

/**
 * Why `task`'s evaluation cannot hand the agent's code to a separate process (it imports a class from the
 * agent's module: objects do not cross a process boundary), or undefined when it can (or the task is not a
 * Python-submission task). Read from the evaluation script and the starter modules.
 * @example proxyProblem(task) // "evaluate.py imports strategy.Player, a class: objects do not cross a process boundary"
 */
export function proxyProblem(task: Task): string | undefined {
  if (task.entrypoint !== "PythonSubmissionTasks") return undefined;
  const key = `${task.file}\0${task.id}`;
  if (!problems.has(key)) problems.set(key, findProxyProblem(task));
  return problems.get(key);
}

const problems = new Map<string, string | undefined>();

function findProxyProblem(task: Task): string | undefined {
  const modules = starterModules(task);
  const { trusted, hidden } = guardNames(task);
  const local = new Set([...trusted, ...hidden].map((p) => p.slice(0, -3)));
  const script = task.evaluationPaths[0] as string;
  const evaluator = modules.get(script.replace(/\.py$/, ""));
  if (!evaluator || !existsSync(evaluator)) return undefined;
  const source = readFileSync(evaluator, "utf8");
  const used: [string, string][] = [];
  for (const m of source.matchAll(/^\s*from\s+(\w+)\s+import\s+\(?([\w\s,]+)\)?/gm))
    for (const n of (m[2] as string).split(",").map((x) => x.trim().split(/\s+/)[0] as string))
      if (n) used.push([m[1] as string, n]);
  for (const m of source.matchAll(/^\s*import\s+(\w+)/gm))
    for (const a of source.matchAll(new RegExp(`\\b${m[1]}\\.(\\w+)`, "g")))
      used.push([m[1] as string, a[1] as string]);
  for (const [module, name] of used) {
    const file = modules.get(module);
    if (local.has(module) || !file || !existsSync(file)) continue;
    if (definition(readFileSync(file, "utf8"), name) === "class")
      return `${script} imports ${module}.${name}, a class: objects do not cross a process boundary, so the agent's ${module}.py runs in the scorer's process and can forge the score`;
  }
  return undefined;
}

/** Whether `task` is named (by name or id) in `allow`. */
export function allowed(allow: string[], name: string, task: Task): boolean {
  return allow.includes(name) || allow.includes(task.id);
}

/**
 * Checks that keep `rl` off forgeable tasks: a task whose evaluation cannot be proxied, or whose latest audit
 * (`audit`: the launcher's `ctx.audit`, what `bun run audit` with the same config stored) has a critical finding,
 * fails unless `env.allow_forgeable` names it. Findings that could not be read fail one check of their own.
 * @example forgeChecks([{ name: "blotto", task }], [], ctx.audit) // [{ name: "task blotto: reward integrity", status: "ok", … }]
 */
export function forgeChecks(
  tasks: { name: string; task: Task }[],
  allow: string[],
  audit?: AuditFindings,
): CheckResult[] {
  const unreadable: CheckResult[] = audit?.unreadable
    ? [
        {
          name: "audit findings",
          status: "fail",
          message: `${audit.source} cannot be read: ${audit.unreadable}`,
        },
      ]
    : [];
  return [...unreadable, ...tasks.map(({ name, task }) => taskCheck(name, task, allow, audit))];
}

function taskCheck(name: string, task: Task, allow: string[], audit?: AuditFindings): CheckResult {
  const label = `task ${name}: reward integrity`;
  const critical = (audit?.critical ?? []).filter((a) => a.task === task.id || a.task === name);
  const problem = proxyProblem(task);
  const why = [
    ...(problem ? [problem] : []),
    ...critical.map((a) => `audit: ${a.probe} ${a.verdict} (${a.evidence.slice(0, 120)})`),
  ];
  if (why.length === 0)
    return {
      name: label,
      status: "ok" as const,
      message:
        task.entrypoint === "PythonSubmissionTasks"
          ? "the agent's modules run in a separate process behind a proxy"
          : audit
            ? "no critical audit finding"
            : "not audited (bun run audit <config>)",
    };
  if (allowed(allow, name, task))
    return {
      name: label,
      status: "ok" as const,
      message: `allowed by env.allow_forgeable: ${why.join("; ")}`,
    };
  return {
    name: label,
    status: "fail" as const,
    message: `${why.join("; ")}; name it in env.allow_forgeable to train on it anyway`,
  };
}
