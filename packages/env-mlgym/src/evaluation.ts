import type { EvaluationOutput, Sandbox } from "@air/sandbox";
import { shellQuote } from "@air/sandbox";
import { cleanOutput } from "./aci/observation.ts";
import { DEFAULT_PROXY_CALL_TIMEOUT_S, GUARD_EXIT, guarded, guardedCommand } from "./guard/guard.ts";
import { canonicalScores } from "./known-tasks.ts";
import type { Task } from "./task.ts";

/** Exit status of an evaluation whose artefact is missing (the task's evaluator never ran); the guard's is 86. */
const NO_ARTEFACT_EXIT = 87;
const MISSING_PREFIX = "air evaluation: ";
const ARTEFACT_PREFIX = "air-evaluation-artefact: ";
const NO_SUBMISSION = "No submission file found. Please make sure that your code produces a submission file.";
const NO_MODEL =
  "No valid submission artefacts found. Please make sure that your code produces a checkpoints folder.";
const NO_GPU =
  "This task's evaluation runs torchrun on a GPU, and the sandbox sees none (give the docker runtime GPUs: env.docker.gpu_ids or [deployment] env_gpu_ids).";

/**
 * MLGym's message for an evaluation that printed no metrics (`EvaluationFormatError`, mlgym/environment/tasks.py
 * at 9d40c1b): its output between two `---` lines, then the request to print JSON.
 * @example decodeFailure("Traceback …") // "Failed to decode metrics from evaluation script. Output:\n---\nTraceback …\n---\n…"
 */
export function decodeFailure(output: string): string {
  return `Failed to decode metrics from evaluation script. Output:\n---\n${output}\n---\nPlease make sure the evaluation script prints the metrics in json format.`;
}

/** Where MLGym's `PythonSubmissionTasks.evaluate` says the artefact is, whatever file the agent wrote. */
const PYTHON_SUBMISSION = "target.py";

/** Shell words that end the evaluation with {@link NO_ARTEFACT_EXIT} and `message` when `condition` holds. */
function missing(condition: string, message: string): string {
  return `if ${condition}; then echo ${shellQuote(MISSING_PREFIX + message)} >&2; exit ${NO_ARTEFACT_EXIT}; fi;`;
}

/** Shell words printing the artefact's path (relative to the workspace) as the evaluation's first stdout line. */
function artefactLine(path: string): string {
  return `printf '%s\\n' ${shellQuote(ARTEFACT_PREFIX)}${path};`;
}

/** The evaluation's output without its first artefact line, and that line's path. */
function takeArtefactLine(out: EvaluationOutput): { out: EvaluationOutput; artefact?: string } {
  if (!out.stdout.startsWith(ARTEFACT_PREFIX)) return { out };
  const end = out.stdout.indexOf("\n");
  const line = end < 0 ? out.stdout : out.stdout.slice(0, end);
  return {
    out: { ...out, stdout: end < 0 ? "" : out.stdout.slice(end + 1) },
    artefact: line.slice(ARTEFACT_PREFIX.length),
  };
}

/** The import guard's line with what the agent's module wrote (base64; see import-guard.py). */
const AGENT_OUTPUT_PREFIX = "air-agent-output: ";

/** What the agent's module wrote during a guarded evaluation, and the evaluation's stderr without that line. */
function takeAgentOutput(stderr: string): { agent: string; stderr: string } {
  const lines = stderr.split("\n");
  const at = lines.findLastIndex((l) => l.startsWith(AGENT_OUTPUT_PREFIX));
  if (at < 0) return { agent: "", stderr };
  const agent = Buffer.from((lines[at] as string).slice(AGENT_OUTPUT_PREFIX.length), "base64").toString(
    "utf8",
  );
  return { agent, stderr: lines.filter((_, i) => i !== at).join("\n") };
}

/** Outcome of one evaluation: scores, or why there are none. */
export type EvaluationResult =
  | { ok: true; scores: Record<string, number>; artefact: string }
  | { ok: false; error: string };

/** The numeric values of `text` parsed as one JSON object, or undefined. */
function numericObject(text: string): Record<string, number> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
    const scores: Record<string, number> = {};
    for (const [k, v] of Object.entries(value))
      if (typeof v === "number" && Number.isFinite(v)) scores[k] = v;
    return Object.keys(scores).length > 0 ? scores : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Parses metrics: the whole stdout as one JSON object (MLGym's way, so multi-line JSON works), else the last
 * stdout line that is a JSON object (so a stray print before it does not fail the evaluation); numeric
 * values only.
 * @example parseMetrics('loading\n{"Score": 1.02}') // { Score: 1.02 }
 */
export function parseMetrics(stdout: string): Record<string, number> | undefined {
  const whole = stdout.trim();
  if (whole.startsWith("{")) {
    const scores = numericObject(whole);
    if (scores) return scores;
  }
  const lines = stdout.split("\n").map((l) => l.trim());
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as string;
    if (!line.startsWith("{")) continue;
    const scores = numericObject(line);
    if (scores) return scores;
  }
  return undefined;
}

/**
 * Evaluates the sandbox's current artefact the way the task's MLGym entrypoint does (CSV: submission.csv;
 * Python: the evaluation script imports the agent's code; Model: the first *.yaml; LM: torchrun), on a fresh
 * copy of the workspace with pristine evaluation files, as a user the agent is not.
 * @example const r = await evaluateTask(sandbox, task, { python: "python" }); if (r.ok) r.scores.r2;
 */
export async function evaluateTask(
  sandbox: Sandbox,
  task: Task,
  options: { python: string; timeoutMs: number; proxyCallTimeoutS?: number },
): Promise<EvaluationResult> {
  const script = task.evaluationPaths[0] as string;
  const ws = sandbox.workspace;
  // MLGym runs `python /home/agent/workspace/evaluate.py …`: absolute paths, so a traceback names the file the
  // same way. The evaluation runs in its copy of the workspace, mounted at the workspace's path ("$PWD").
  const at = (path: string) => `"$PWD"/${shellQuote(path)}`;
  let command: string;
  switch (task.entrypoint) {
    // The artefact checks run inside the evaluation (as root, on its copy of the workspace), never in the agent's
    // shell: a background process of the agent writing to that shell's output, or a shell function named `test`
    // or `find`, would otherwise decide what the check sees.
    case "CSVSubmissionTasks":
      command =
        `${missing("[ ! -f submission.csv ]", NO_SUBMISSION)} ${artefactLine("submission.csv")}` +
        `${options.python} ${at(script)} --submission_file ${at("submission.csv")}`;
      break;
    case "ModelSubmissionTasks":
      command =
        `config=$(find . -type f -name '*.yaml' | head -n1); ${missing('[ -z "$config" ]', NO_MODEL)}` +
        ` ${artefactLine('"$config"')}${options.python} ${at(script)} --config_fname "$PWD/\${config#./}"`;
      break;
    case "LMSubmissionTasks":
      command =
        `${missing("! nvidia-smi -L 2>/dev/null | grep -q '^GPU'", NO_GPU)} ${artefactLine(".")}` +
        `torchrun --nproc_per_node=1 --standalone ${at(script)}`;
      break;
    default:
      command = `${artefactLine(PYTHON_SUBMISSION)}${
        guarded(task)
          ? guardedCommand(
              task,
              options.python,
              script,
              options.proxyCallTimeoutS ?? DEFAULT_PROXY_CALL_TIMEOUT_S,
            )
          : `${options.python} ${at(script)}`
      }`;
  }
  const evaluated = await sandbox.evaluate({ command, timeoutMs: options.timeoutMs });
  const { out, artefact: found } = takeArtefactLine(evaluated);
  // MLGym's LMSubmissionTasks.evaluate gives "" as the submission path (its line reads "… artefact at .")
  const artefact = found === "." ? "" : found === undefined ? ws : `${ws}/${found.replace(/^\.\//, "")}`;
  if (out.exitCode === NO_ARTEFACT_EXIT) {
    const said = out.stderr.split("\n").find((l) => l.startsWith(MISSING_PREFIX));
    if (said) return { ok: false, error: said.slice(MISSING_PREFIX.length) };
  }
  if (out.timedOut)
    return { ok: false, error: `Evaluation timed out after ${Math.round(options.timeoutMs / 1000)} s.` };
  const scores = out.exitCode === 0 ? parseMetrics(out.stdout) : undefined;
  if (out.exitCode === GUARD_EXIT && guarded(task)) {
    const said = out.stderr.split("\n").filter((l) => l.startsWith("air import guard: "));
    if (said.length > 0) return { ok: false, error: `Evaluation error: ${said.at(-1)?.slice(18)} No score.` };
  }
  // MLGym reads one stream (stdout and stderr as written); air keeps them apart (stderr is never read for
  // scores) and shows what the agent's module wrote (the import guard's report), stdout, then stderr, cleaned
  // as every MLGym output is.
  if (!scores) {
    const { agent, stderr } = guarded(task) ? takeAgentOutput(out.stderr) : { agent: "", stderr: out.stderr };
    return { ok: false, error: decodeFailure(cleanOutput(`${agent}\n${out.stdout}\n${stderr}`)) };
  }
  const names = [...Object.keys(task.baselineScores), ...Object.keys(task.directions)];
  return { ok: true, scores: canonicalScores(scores, names), artefact };
}
