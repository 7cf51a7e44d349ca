import type { Task } from "../task.ts";
import type { MlgymAgent } from "./mlgym-agent.ts";
import { pyFormat } from "./py-format.ts";

/** Where the agent stands, for MLGym's templates. */
export interface TemplateState {
  step: number;
  remaining: number;
  openFile: string;
  cwd: string;
}

/**
 * Python's repr of a number, as MLGym prints metrics (`1.0`, `0.5`, `1e-05`, `30340.1`).
 * @example pyNumber(1) // "1.0" when `float` is set, "1" otherwise
 */
export function pyNumber(value: number, float = !Number.isInteger(value)): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  if (!float) return String(value);
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e16)) {
    const [mantissa = "", exponent = "0"] = value.toExponential().split("e");
    const sign = exponent.startsWith("-") ? "-" : "+";
    return `${mantissa}e${sign}${exponent.replace(/^[+-]/, "").padStart(2, "0")}`;
  }
  const text = String(value);
  return text.includes(".") ? text : `${text}.0`;
}

/**
 * Python's repr of a `{name: number}` dict (`{'Score': 1.02267}`); whole numbers print as floats, as the
 * YAML baselines and JSON metrics MLGym prints usually are.
 * @example pyDict({ Score: 1.5 }) // "{'Score': 1.5}"
 */
export function pyDict(values: Record<string, number>): string {
  return `{${Object.entries(values)
    .map(([k, v]) => `'${k}': ${pyNumber(v, true)}`)
    .join(", ")}}`;
}

/** The task's fields MLGym's templates may use (its TaskConfig as a dict). */
function taskFields(task: Task): Record<string, unknown> {
  return {
    id: task.id,
    name: task.name,
    description: task.description,
    training_timeout: task.trainingTimeoutS,
    task_entrypoint: task.entrypoint,
    use_generic_conda: true,
    baseline_scores: `[${pyDict(task.baselineScores)}]`,
    evaluation_read_only: task.evaluationReadOnly ? "True" : "False",
    memory_path: task.memoryPath ?? "None",
    requirements_path: task.requirementsPath ?? "None",
    sample_submission: task.sampleSubmission ?? "None",
    benchmark_name: "None",
  };
}

function systemFields(agent: MlgymAgent): Record<string, unknown> {
  return { command_docs: agent.commandDocs, ...agent.envVariables };
}

/** MLGym's system message: its system template with the command docs, env variables and task fields. */
export function mlgymSystemPrompt(agent: MlgymAgent, task: Task): string {
  return pyFormat(agent.systemTemplate, { ...systemFields(agent), ...taskFields(task) });
}

function stateFields(state: TemplateState): Record<string, unknown> {
  return {
    current_step: state.step,
    remaining_steps: state.remaining,
    open_file: state.openFile,
    working_dir: state.cwd,
  };
}

/** MLGym's first user message: its task template. */
export function mlgymTaskPrompt(agent: MlgymAgent, task: Task, state: TemplateState): string {
  return pyFormat(agent.taskTemplate, { ...taskFields(task), ...systemFields(agent), ...stateFields(state) });
}

/** MLGym's next observation: the no-output template when the output is blank, else the next-step template. */
export function mlgymObservation(
  agent: MlgymAgent,
  task: Task,
  output: string,
  state: TemplateState,
): string {
  const template = output.trim() === "" ? agent.nextStepNoOutputTemplate : agent.nextStepTemplate;
  return pyFormat(template, {
    ...taskFields(task),
    ...systemFields(agent),
    ...stateFields(state),
    observation: output,
  });
}
