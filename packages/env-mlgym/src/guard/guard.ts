import { readFileSync } from "node:fs";
import { basename, sep } from "node:path";
import { shellQuote } from "../runtime/shell.ts";
import type { Task } from "../task.ts";

/** Source of air's import guard (`import-guard.py`), run with `python -c`. */
export const IMPORT_GUARD = readFileSync(new URL("./import-guard.py", import.meta.url), "utf8");

/** Exit status of an evaluation the guard ended (a proxy call hung, a value could not cross, the agent's process died). */
export const GUARD_EXIT = 86;

/** Default seconds one call into the agent's module may take before the evaluation ends without a score. */
export const DEFAULT_PROXY_CALL_TIMEOUT_S = 60;

/** Whether `task`'s evaluation runs under the import guard (MLGym's Python-submission tasks). */
export function guarded(task: Task): boolean {
  return task.entrypoint === "PythonSubmissionTasks";
}

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
