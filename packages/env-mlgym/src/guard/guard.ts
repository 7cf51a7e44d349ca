import { readFileSync } from "node:fs";
import { shellQuote } from "@air/sandbox";
import type { Task } from "../task.ts";
import { guardNames, proxyProblem } from "./forgeable.ts";

const source = (file: string) => readFileSync(new URL(file, import.meta.url), "utf8");

/**
 * Source of air's import guard, run with `python -c`: `import-guard.py` (the evaluation side) after
 * `PLAIN_SOURCE` (`plain.py`, shared) and `HOST_SOURCE` (`host.py`, the agent's process) as string literals and
 * `agent-output.py` (what the agent's module wrote, reported after the evaluation).
 */
export const IMPORT_GUARD = [
  `PLAIN_SOURCE = ${JSON.stringify(source("./plain.py"))}`,
  `HOST_SOURCE = ${JSON.stringify(source("./host.py"))}`,
  source("./agent-output.py"),
  source("./import-guard.py"),
].join("\n");

/** Exit status of an evaluation the guard ended (a proxy call hung, a value could not cross, the agent's process died). */
export const GUARD_EXIT = 86;

/** Default seconds one call into the agent's module may take before the evaluation ends without a score. */
export const DEFAULT_PROXY_CALL_TIMEOUT_S = 60;

/**
 * Whether `task`'s evaluation runs under the import guard: MLGym's Python-submission tasks, unless their
 * interface cannot be proxied (`proxyProblem`: then the evaluation imports the agent's code as upstream does,
 * and `rl check` fails unless `env.allow_forgeable` names the task).
 */
export function guarded(task: Task): boolean {
  return task.entrypoint === "PythonSubmissionTasks" && proxyProblem(task) === undefined;
}

/**
 * The shell command that runs `script` (workspace-relative) unchanged under the import guard: workspace modules
 * the agent wrote run in a separate confined process behind a proxy; only the evaluation's own output counts.
 * @example guardedCommand(task, "python", "evaluate.py", 60) // "python -c '…' --trusted evaluate.py,target.py … -- evaluate.py"
 */
export function guardedCommand(task: Task, python: string, script: string, callTimeoutS: number): string {
  const { trusted, hidden } = guardNames(task);
  const options = [
    ["--trusted", trusted.join(",")],
    ["--hidden", hidden.join(",")],
    ["--call-timeout-s", String(callTimeoutS)],
  ].flatMap(([k, v]) => (v ? [k as string, shellQuote(v)] : []));
  return `${python} -c ${shellQuote(IMPORT_GUARD)} ${options.join(" ")} -- ${shellQuote(script)}`;
}
