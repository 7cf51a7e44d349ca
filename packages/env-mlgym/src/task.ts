import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, isAbsolute, join, resolve } from "node:path";
import { AirError, type MetricDirection } from "@air/core";
import YAML from "yaml";
import { z } from "zod";
import {
  KNOWN_TASK_PRISTINE_FILES,
  KNOWN_TASK_SCORE_RANGES,
  KNOWN_TASK_SECRET_FILES,
  metricDirection,
} from "./known-tasks.ts";

/**
 * MLGym's task classes; each evaluates its artefact differently.
 * @example TASK_ENTRYPOINTS.includes("CSVSubmissionTasks") // true
 */
export const TASK_ENTRYPOINTS = [
  "CSVSubmissionTasks",
  "PythonSubmissionTasks",
  "ModelSubmissionTasks",
  "LMSubmissionTasks",
] as const;
export type TaskEntrypoint = (typeof TASK_ENTRYPOINTS)[number];

const pathList = z.array(z.string().min(1)).default([]);

const taskYaml = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  description: z.string().min(1),
  dataset_configs: pathList,
  task_entrypoint: z.enum(TASK_ENTRYPOINTS).default("CSVSubmissionTasks"),
  training_timeout: z.number().positive().nullish(),
  use_generic_conda: z.boolean().default(true),
  requirements_path: z.string().nullish(),
  benchmark_name: z.string().nullish(),
  starter_code: pathList,
  baseline_paths: pathList,
  baseline_scores: z.array(z.record(z.string(), z.number())).default([]),
  sample_submission: z.string().nullish(),
  evaluation_paths: pathList,
  evaluation_read_only: z.boolean().default(false),
  evaluation_drops_privileges: z.boolean().default(false),
  secret_files: pathList,
  pristine_files: z.array(z.string().min(1)).optional(),
  memory_path: z.string().nullish(),
  metric_directions: z.record(z.string(), z.enum(["maximize", "minimize"])).default({}),
  score_ranges: z
    .record(
      z.string(),
      z
        .tuple([z.number().nullable(), z.number().nullable()])
        .refine(([lo, hi]) => lo === null || hi === null || lo <= hi, "expected [min, max] with min <= max"),
    )
    .optional(),
});

const datasetYaml = z.object({
  name: z.string().min(1),
  description: z.string().default(""),
  data_path: z.string().min(1),
  is_local: z.boolean().default(false),
});

/** A dataset of a task, with its data folder resolved on the host. */
export interface TaskDataset {
  name: string;
  description: string;
  /** Absolute host path of the data folder (copied to `<workspace>/data`). */
  dataPath: string;
}

/** A task YAML with every path resolved against the MLGym root and the description filled in. */
export interface Task {
  id: string;
  name: string;
  description: string;
  entrypoint: TaskEntrypoint;
  /** Seconds a training command (or an evaluation) may take. */
  trainingTimeoutS: number;
  /** Absolute host paths copied to the workspace root. */
  starterCode: string[];
  /** Workspace-relative baseline scripts. */
  baselinePaths: string[];
  baselineScores: Record<string, number>;
  /** Workspace-relative evaluation scripts (the first one is run). */
  evaluationPaths: string[];
  evaluationReadOnly: boolean;
  /**
   * Whether the evaluation runs agent-written code with the evaluator's privileges (true for MLGym's
   * Python/Model/LM tasks, whose evaluators import the agent's code; false for CSV tasks and for tasks whose
   * YAML sets `evaluation_drops_privileges: true`). A container that ran such an evaluation is not reused.
   */
  evaluationRunsAgentCode: boolean;
  /** Absolute host paths of files only the evaluation sees (ground truth, hidden opponents, ...). */
  secretFiles: string[];
  /**
   * Workspace-relative files the agent sees whose pristine copy replaces the agent's at evaluation (the
   * games' opponent `target.py`); the evaluation paths are always restored too.
   */
  pristineFiles: string[];
  datasets: TaskDataset[];
  sampleSubmission?: string;
  memoryPath?: string;
  requirementsPath?: string;
  directions: Record<string, MetricDirection>;
  /**
   * Values each metric can take (air extension `score_ranges: { Score: [min, max] }`, null for an open end;
   * default `KNOWN_TASK_SCORE_RANGES` for MLGym's games): a score outside is impossible and never rewarded.
   */
  scoreRanges: Record<string, { min?: number; max?: number }>;
  priorityMetric: string;
  /** The YAML file it was read from. */
  file: string;
}

/**
 * Path of a task YAML: a bare name means `<root>/configs/tasks/<name>.yaml`; a `.yaml` path is taken as
 * absolute, else relative to `<root>/configs` (MLGym's `tasks/<name>.yaml` form), else relative to the root.
 * @example taskFile("/mlgym", "titanic") // "/mlgym/configs/tasks/titanic.yaml"
 */
export function taskFile(mlgymRoot: string, task: string): string {
  if (!task.endsWith(".yaml") && !task.endsWith(".yml")) {
    const named = join(mlgymRoot, "configs", "tasks", `${task}.yaml`);
    return existsSync(named) ? named : (taskFileById(mlgymRoot, task) ?? named);
  }
  if (isAbsolute(task)) return task;
  const candidates = [join(mlgymRoot, "configs", task), join(mlgymRoot, task)];
  return candidates.find((c) => existsSync(c)) ?? (candidates[0] as string);
}

/**
 * The task YAML under `<root>/configs/tasks` whose `id` is `id` (MLGym names tasks by file, `titanic`, whose
 * id is `titanicSurvival`; a config may use either).
 * @example taskFileById("/mlgym", "titanicSurvival") // "/mlgym/configs/tasks/titanic.yaml"
 */
export function taskFileById(mlgymRoot: string, id: string): string | undefined {
  const dir = join(mlgymRoot, "configs", "tasks");
  if (!existsSync(dir)) return undefined;
  for (const entry of readdirSync(dir).sort()) {
    if (!entry.endsWith(".yaml") && !entry.endsWith(".yml")) continue;
    const text = readFileSync(join(dir, entry), "utf8");
    const match = /^id:\s*["']?([^"'\s#]+)/m.exec(text);
    if (match?.[1] === id) return join(dir, entry);
  }
  return undefined;
}

function invalid(file: string, message: string): AirError {
  return new AirError("CONFIG_INVALID", `task ${file}: ${message}`, { plugin: "mlgym" });
}

async function readYaml(file: string): Promise<unknown> {
  if (!existsSync(file)) throw invalid(file, "file not found");
  try {
    return YAML.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw invalid(file, `not valid YAML: ${(error as Error).message}`);
  }
}

function issues(file: string, error: z.ZodError): AirError {
  const lines = error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
  return new AirError("CONFIG_INVALID", `task ${file}: ${lines.join("; ")}`, {
    plugin: "mlgym",
    details: lines,
  });
}

function mustExist(file: string, root: string, path: string, what: string): string {
  const full = resolve(root, path);
  if (!existsSync(full)) throw invalid(file, `${what} not found: ${path} (looked for ${full})`);
  return full;
}

/**
 * Reads a task YAML (and its dataset YAMLs) from an MLGym root: `configs/tasks/*.yaml`, `configs/datasets/*.yaml`,
 * data and starter code relative to the root. Every missing field, unknown entrypoint or missing file is a
 * `CONFIG_INVALID` error naming the YAML file.
 * @example const task = await loadTask("/work/main", "apartmentRent"); task.priorityMetric // "r2"
 */
export async function loadTask(
  mlgymRoot: string,
  name: string,
  overrides: { directions?: Record<string, MetricDirection>; priorityMetric?: string } = {},
): Promise<Task> {
  const file = taskFile(mlgymRoot, name);
  const parsed = taskYaml.safeParse(await readYaml(file));
  if (!parsed.success) throw issues(file, parsed.error);
  const t = parsed.data;
  const datasets: TaskDataset[] = [];
  for (const ref of t.dataset_configs) {
    const dsFile = mustExist(file, join(mlgymRoot, "configs"), ref, "dataset config");
    const ds = datasetYaml.safeParse(await readYaml(dsFile));
    if (!ds.success) throw issues(dsFile, ds.error);
    if (!ds.data.is_local) throw invalid(dsFile, "only local datasets (is_local: true) are supported");
    const dataFull = resolve(mlgymRoot, ds.data.data_path);
    if (!existsSync(dataFull)) {
      const hint = dataHint(mlgymRoot, dataFull);
      throw invalid(
        dsFile,
        `data_path not found: ${ds.data.data_path} (looked for ${dataFull})${hint ? `; ${hint}` : ""}`,
      );
    }
    const dataPath = dataFull;
    if (!statSync(dataPath).isDirectory()) throw invalid(dsFile, `data_path is not a directory: ${dataPath}`);
    datasets.push({ name: ds.data.name, description: ds.data.description, dataPath });
  }
  const starterCode = t.starter_code.map((p) => mustExist(file, mlgymRoot, p, "starter_code"));
  if (t.evaluation_paths.length === 0) throw invalid(file, "evaluation_paths is empty");
  const baselineScores = t.baseline_scores[0] ?? {};
  const metrics = Object.keys(baselineScores);
  const declared = { ...t.metric_directions, ...overrides.directions };
  const directions: Record<string, MetricDirection> = {};
  for (const m of new Set([
    ...metrics,
    ...Object.keys(declared).map((k) => canonicalMetric(k, metrics) ?? k),
  ]))
    directions[m] = metricDirection(t.id, m, declared);
  const docs = datasets.map((d) => `${d.name.toUpperCase()}:\n${d.description}\n\n`).join("");
  return {
    id: t.id,
    name: t.name,
    description: t.description.replaceAll("{dataset_docs}", docs),
    entrypoint: t.task_entrypoint,
    trainingTimeoutS: t.training_timeout ?? 3600,
    starterCode,
    baselinePaths: t.baseline_paths,
    baselineScores,
    evaluationPaths: t.evaluation_paths,
    evaluationReadOnly: t.evaluation_read_only,
    evaluationRunsAgentCode: t.task_entrypoint !== "CSVSubmissionTasks" && !t.evaluation_drops_privileges,
    secretFiles:
      t.secret_files.length > 0
        ? t.secret_files.map((p) => mustExist(file, mlgymRoot, p, "secret_files entry"))
        : (KNOWN_TASK_SECRET_FILES[t.id] ?? [])
            .map((p) => resolve(mlgymRoot, p))
            .filter((p) => existsSync(p)),
    pristineFiles: (t.pristine_files ?? KNOWN_TASK_PRISTINE_FILES[t.id] ?? []).filter((p) =>
      starterCode.some((s) => basename(s) === p.split("/")[0]),
    ),
    datasets,
    sampleSubmission: t.sample_submission
      ? mustExist(file, mlgymRoot, t.sample_submission, "sample_submission")
      : undefined,
    memoryPath: t.memory_path ?? undefined,
    requirementsPath: t.requirements_path ?? undefined,
    directions,
    scoreRanges: t.score_ranges
      ? Object.fromEntries(
          Object.entries(t.score_ranges).map(([m, [lo, hi]]) => [
            canonicalMetric(m, metrics) ?? m,
            { ...(lo === null ? {} : { min: lo }), ...(hi === null ? {} : { max: hi }) },
          ]),
        )
      : (KNOWN_TASK_SCORE_RANGES[t.id] ?? {}),
    priorityMetric:
      canonicalMetric(overrides.priorityMetric, metrics) ?? metrics[0] ?? Object.keys(declared)[0] ?? "Score",
    file,
  };
}

/** `name` spelled as in `metrics` when one matches ignoring case (the YAML's spelling is the key). */
function canonicalMetric(name: string | undefined, metrics: string[]): string | undefined {
  if (name === undefined) return undefined;
  return (
    metrics.find((m) => m === name) ?? metrics.find((m) => m.toLowerCase() === name.toLowerCase()) ?? name
  );
}

/**
 * How a missing data folder is made, when a helper script sits beside it (MLGym's house-price data is written
 * by `data/regressionKaggleHousePrice/_helpers/_generate_split.py` into `../data`), else undefined.
 * @example dataHint("/mlgym", "/mlgym/data/regressionKaggleHousePrice/data")
 * // "make it with: cd /mlgym/data/regressionKaggleHousePrice/_helpers && python _generate_split.py"
 */
export function dataHint(mlgymRoot: string, dataPath: string): string | undefined {
  const helpers = join(dataPath, "..", "_helpers");
  if (!existsSync(helpers) || !statSync(helpers).isDirectory()) return undefined;
  const scripts = readdirSync(helpers)
    .filter((f) => f.endsWith(".py"))
    .sort((a, b) => Number(b.includes("generate")) - Number(a.includes("generate")) || a.localeCompare(b));
  if (scripts.length === 0) return undefined;
  return `make it with: cd ${resolve(mlgymRoot, helpers)} && python ${scripts[0]}`;
}
