import { commandStep, type StepResult } from "@air/core";
import type { ExecResult } from "@air/sandbox";
import { pyDict } from "./aci/mlgym-prompts.ts";
import type { ToolsResult } from "./aci/mlgym-shell.ts";
import type { EvaluationResult } from "./evaluation.ts";
import type { Task } from "./task.ts";

/** Renders an observation with the session's state footer (the session's `observe`). */
type Observe = (output: string) => string;

/** The turn of a reply with no command (air's own commands): the agent is told how to reply. */
export function formatErrorStep(why: string, observe: Observe): StepResult {
  return {
    observation: observe(
      `Your output was not formatted correctly: ${why}. Reply with a DISCUSSION and exactly one command in a fenced code block.`,
    ),
    done: false,
    kind: "command",
    info: { formatError: true },
  };
}

/** The turn of an interactive or disallowed command (`blocked`, its name), which is not run. */
export function blockedStep(blocked: string, observe: Observe): StepResult {
  return {
    observation: observe(
      `Operation '${blocked}' is not supported by this environment (it is interactive or not allowed).`,
    ),
    done: false,
    kind: "command",
    info: { blocked },
  };
}

/** The turn of a shell command run with air's own commands: its output and exit code, or that it timed out. */
export function shellStep(result: ExecResult, timeoutMs: number, observe: Observe): StepResult {
  if (result.timedOut) {
    const message = `The command timed out after ${timeoutMs / 1000} s and was killed (with every process it started).`;
    return { observation: observe(message), done: false, kind: "command", toolError: message };
  }
  return commandStep(observe(result.output), result);
}

/** The turn of a command in the shell with MLGym's own tools (`env.aci = "mlgym"`), with MLGym's timeout message. */
export function toolsStep(result: ToolsResult, timeoutMs: number, observe: Observe): StepResult {
  const output = result.timedOut
    ? `${result.output}\nEXECUTION TIMED OUT BECAUSE THE COMMAND WAS RUNNING FOR MORE THAN ${timeoutMs / 1000} SECONDS.`
    : result.output;
  return commandStep(observe(output), result);
}

/** The turn of an evaluation: the scores against the baseline, or why there are none; `submit` and `auto_submit` end the episode. */
export function evaluationStep(
  task: Task,
  result: EvaluationResult,
  kind: "validate" | "submit" | "auto_submit",
  exit: string,
  observe: Observe,
): StepResult {
  const ends = kind !== "validate";
  if (!result.ok) {
    const output = ends ? `${result.error}\nThe episode has ended without a score.` : result.error;
    return {
      observation: observe(output),
      done: ends,
      kind,
      evaluationError: result.error,
      ...(ends ? { info: { exit } } : {}),
    };
  }
  const why = exit === "exit_format" ? "replies not in the expected format" : "no steps left";
  const lines = [
    kind === "validate"
      ? `Your code produced a valid submission artefact at ${result.artefact}.`
      : `Submitted the artefact at ${result.artefact}${kind === "auto_submit" ? ` (automatically: ${why})` : ""}.`,
    `Baseline Score: ${pyDict(task.baselineScores)}`,
    `Evaluation Score: ${pyDict(result.scores)}`,
  ];
  return {
    observation: observe(lines.join("\n")),
    done: ends,
    kind,
    scores: result.scores,
    ...(ends ? { info: { exit } } : {}),
  };
}
