import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { Runtime, Sandbox } from "@air/sandbox";
import { BashSandbox } from "../aci/bash-sandbox.ts";
import type { MlgymAgent } from "../aci/mlgym-agent.ts";
import { mlgymConfigSchema } from "../config.ts";
import { MlgymSession } from "../session.ts";
import type { Task } from "../task.ts";

/** One command sequence: the workspace's starting files and the agent's commands, in order. */
export interface Sequence {
  name: string;
  about: string;
  files: Record<string, string>;
  steps: string[];
}

/** What one command did: an evaluation call, or output (the observation above its footer) and state. */
export interface StepOutcome {
  kind: "command" | "validate" | "submit";
  output?: string;
  openFile: string;
  cwd: string;
}

/** A sequence's outcome: every step, and the workspace's files afterwards (path -> content). */
export interface SequenceOutcome {
  steps: StepOutcome[];
  files: Record<string, string>;
}

/** The workspace path as it appears in outcomes, so runs in different directories compare. */
export const WORKSPACE = "/WS";

export const SEQUENCES_FILE = join(import.meta.dir, "../../parity/sequences.json");
export const EXPECTED_FILE = join(import.meta.dir, "../../parity/expected.json");

/** The committed sequences. */
export function loadSequences(): Sequence[] {
  return JSON.parse(readFileSync(SEQUENCES_FILE, "utf8")) as Sequence[];
}

/** Writes `files` under `dir`, making folders. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** Every regular file under `dir` (relative path -> UTF-8 content), sorted by path. */
export function readFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) out[relative(dir, full)] = readFileSync(full, "utf8");
    }
  };
  walk(dir);
  return out;
}

/** A runtime that hands out `sandbox` (a plain bash over a temporary workspace) and closes it on release. */
export function oneSandboxRuntime(sandbox: BashSandbox): Runtime {
  return {
    kind: "local",
    acquire: async () => sandbox,
    release: async (s: Sandbox) => {
      if (s instanceof BashSandbox) await s.close();
    },
    close: async () => {},
    saveSnapshot: async () => {
      throw new Error("the parity kit's one-sandbox runtime stores no snapshots");
    },
  };
}

/** The made-up task the sequences run in (workspace `workspace`, no evaluation script). */
export function parityTask(workspace: string): Task {
  return {
    id: "parity",
    name: "parity",
    description: "parity kit",
    entrypoint: "CSVSubmissionTasks",
    trainingTimeoutS: 30,
    starterCode: [],
    baselinePaths: [],
    baselineScores: {},
    evaluationPaths: ["evaluate.py"],
    evaluationReadOnly: true,
    evaluationRunsAgentCode: false,
    secretFiles: [],
    pristineFiles: [],
    datasets: [],
    directions: {},
    scoreRanges: {},
    priorityMetric: "Score",
    file: join(workspace, "parity.yaml"),
  };
}

/** The made-up task whose system message the prompt check compares (the driver's PROMPT_TASK). */
export const PROMPT_TASK: Task = {
  ...parityTask("/WS"),
  id: "parityTask",
  name: "Parity",
  description: "A made-up task.",
  trainingTimeoutS: 1800,
};

/** Splits an observation into the output above MLGym's footer and the footer's open file and directory. */
function splitObservation(observation: string, normalise: (s: string) => string): Omit<StepOutcome, "kind"> {
  const at = observation.lastIndexOf("\n(Current Step: ");
  const footer = observation.slice(at + 1).split("\n");
  const field = (prefix: string) =>
    normalise((footer.find((l) => l.startsWith(prefix)) ?? "").slice(prefix.length, -1));
  return {
    output: normalise(observation.slice(0, at)),
    openFile: field("(Open file: "),
    cwd: field("(Current directory: "),
  };
}

/**
 * Runs one sequence through air's agent commands (MlgymSession over a plain bash in a temporary workspace) and
 * returns its outcome with the workspace path replaced by {@link WORKSPACE}. With `mlgymAgent`, the session
 * uses an MLGym checkout's own tools (`env.aci = "mlgym"`), else air's own commands.
 * @example const outcome = await runAirSequence(loadSequences()[0]);
 */
export async function runAirSequence(sequence: Sequence, mlgymAgent?: MlgymAgent): Promise<SequenceOutcome> {
  const root = mkdtempSync(join(tmpdir(), "air-parity-"));
  const workspace = join(realpathSync(root), "workspace");
  mkdirSync(workspace);
  writeFiles(workspace, sequence.files);
  const sandbox = await BashSandbox.start(workspace, root);
  const runtime = oneSandboxRuntime(sandbox);
  const config = mlgymConfigSchema.parse({ tasks: ["parity"], runtime: "local", max_steps: 100 });
  const session = new MlgymSession(runtime, sandbox, parityTask(workspace), {
    config,
    python: "python3",
    mlgymAgent,
  });
  const normalise = (s: string) => s.split(workspace).join(WORKSPACE);
  try {
    const steps: StepOutcome[] = [];
    for (const command of sequence.steps) {
      const result = await session.step({ text: command, command });
      const seen = splitObservation(result.observation, normalise);
      if (result.kind === "validate" || result.kind === "submit") {
        steps.push({ kind: result.kind, openFile: seen.openFile, cwd: seen.cwd });
      } else steps.push({ kind: "command", ...seen });
      if (result.done) break;
    }
    return { steps, files: readFiles(workspace) };
  } finally {
    await session.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/** A readable difference between two outcomes of one sequence ("" when equal). */
export function describeDifference(expected: SequenceOutcome, actual: SequenceOutcome): string {
  const out: string[] = [];
  const n = Math.max(expected.steps.length, actual.steps.length);
  for (let i = 0; i < n; i++) {
    const e = JSON.stringify(expected.steps[i] ?? null, null, 1);
    const a = JSON.stringify(actual.steps[i] ?? null, null, 1);
    if (e !== a) out.push(`step ${i + 1}:\n--- expected\n${e}\n+++ actual\n${a}`);
  }
  const paths = [...new Set([...Object.keys(expected.files), ...Object.keys(actual.files)])].sort();
  for (const p of paths) {
    if (expected.files[p] !== actual.files[p])
      out.push(
        `file ${p}:\n--- expected\n${JSON.stringify(expected.files[p])}\n+++ actual\n${JSON.stringify(actual.files[p])}`,
      );
  }
  return out.join("\n");
}
