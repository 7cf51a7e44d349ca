import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative, sep } from "node:path";
import { namedFiles, type Task } from "@air/env-mlgym";
import YAML from "yaml";

/** A file only the evaluation should read (ground truth, answers, hidden opponents), as the probes look for it. */
export interface GroundTruth {
  /** Path relative to the workspace where the evaluation sees it (`data/answer.csv`). */
  path: string;
  /** Why it counts: "secret file" (declared or known) or "read by evaluate.py" (named in its source). */
  why: string;
  sha256: string;
  bytes: number;
}

/** What the probes of one task need to know, read on the host from the task's files. */
export interface TaskFacts {
  task: Task;
  /** The agent's workspace as its shell sees it (`/home/agent/workspace`). */
  workspace: string;
  csv: boolean;
  /** Python tasks: the workspace modules the evaluation imports that the agent writes (`strategy.py`). */
  agentModules: string[];
  /** Commands that produce the baseline artefact (empty: the starter code is the baseline). */
  baselineCommands: string[];
  /** False when the YAML names no baseline script for a CSV task (titanic): the baseline cannot be rerun. */
  baselineRunnable: boolean;
  groundTruth: GroundTruth[];
  /** The sample submission's text, when the task ships one (at most 2 MB). */
  sampleSubmission?: string;
  /** Readable workspace files a lazy agent could submit as they are (CSV tasks: every *.csv, at most 12). */
  copyCandidates: string[];
  /** The YAML's own `metric_directions` (air's extension; MLGym keeps directions outside the YAML). */
  declaredDirections: Record<string, string>;
  /** Evaluation scripts and the workspace modules they import that are not restored before evaluation. */
  evaluationFiles: { path: string; restored: boolean }[];
}

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** Every file under `dir` (host), as paths relative to `base`. */
function walk(dir: string, base: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  if (!statSync(dir).isDirectory()) {
    out.push(relative(base, dir));
    return out;
  }
  for (const entry of readdirSync(dir).sort()) walk(join(dir, entry), base, out);
  return out;
}

/** The workspace as the env lays it out: workspace path → host path (starter code at the root, data under data/). */
function workspaceFiles(task: Task): Map<string, string> {
  const files = new Map<string, string>();
  const secret = new Set(task.secretFiles);
  for (const d of task.datasets)
    for (const rel of walk(d.dataPath, d.dataPath)) {
      const host = join(d.dataPath, rel);
      if (!secret.has(host)) files.set(join("data", rel), host);
    }
  for (const s of task.starterCode) {
    const parent = join(s, "..");
    for (const rel of walk(s, parent)) {
      const host = join(parent, rel);
      if (!secret.has(host)) files.set(rel, host);
    }
  }
  return files;
}

/** Where the evaluation sees a secret file (data/<rel> inside a dataset folder, else beside evaluate.py). */
function secretPath(task: Task, file: string): string {
  const dataset = task.datasets.find((d) => file.startsWith(d.dataPath + sep));
  return dataset ? join("data", relative(dataset.dataPath, file)) : basename(file);
}

/** Module names a Python source imports (`import x`, `from x import y`), top-level names only. */
export function importedModules(source: string): string[] {
  const names = new Set<string>();
  for (const m of source.matchAll(/^\s*(?:from\s+([A-Za-z_][\w]*)\s+import|import\s+([A-Za-z_][\w]*))/gm))
    names.add((m[1] ?? m[2]) as string);
  return [...names];
}

/**
 * Reads what the probes need from a loaded task: the workspace as the env builds it, the ground truth (declared
 * secret files, and workspace files the evaluation script names), the agent's modules, the baseline commands.
 * @example const facts = taskFacts(await loadTask(root, "apartmentRent"), "/home/agent/workspace");
 */
export function taskFacts(task: Task, workspace: string): TaskFacts {
  const files = workspaceFiles(task);
  const csv = task.entrypoint === "CSVSubmissionTasks";
  const evaluationSources = task.evaluationPaths.map((p) => ({ path: p, host: files.get(p) }));
  const sources = evaluationSources.map((s) => (s.host ? readFileSync(s.host, "utf8") : "")).join("\n");
  const imported = new Set(importedModules(sources).map((m) => `${m}.py`));
  const starterPy = [...files.keys()].filter((p) => !p.includes("/") && p.endsWith(".py"));
  const restored = new Set([...task.evaluationPaths, ...task.pristineFiles]);
  const agentModules = csv
    ? []
    : starterPy.filter(
        (p) => !restored.has(p) && (imported.has(p) || task.entrypoint === "PythonSubmissionTasks"),
      );
  const helpers = csv
    ? starterPy.filter((p) => imported.has(p) && !restored.has(p))
    : starterPy.filter((p) => imported.has(p) && !restored.has(p) && !agentModules.includes(p));
  const truth: GroundTruth[] = task.secretFiles
    .filter((f) => existsSync(f) && statSync(f).isFile())
    .map((f) => ({
      path: secretPath(task, f),
      why: "secret file",
      sha256: sha256(f),
      bytes: statSync(f).size,
    }));
  for (const name of namedFiles(sources)) {
    if (basename(name) === "submission.csv") continue;
    const hit = [...files.entries()].find(
      ([p]) => p === name || p.endsWith(`/${name}`) || basename(p) === basename(name),
    );
    if (!hit || truth.some((t) => t.path === hit[0])) continue;
    truth.push({
      path: hit[0],
      why: `named in ${task.evaluationPaths[0]}`,
      sha256: sha256(hit[1]),
      bytes: statSync(hit[1]).size,
    });
  }
  const runnable = task.baselinePaths.filter((p) => !restored.has(p) && !agentModules.includes(p));
  const sample =
    task.sampleSubmission && statSync(task.sampleSubmission).size <= 2_000_000
      ? readFileSync(task.sampleSubmission, "utf8")
      : undefined;
  const yaml: unknown = YAML.parse(readFileSync(task.file, "utf8"));
  const declared =
    yaml && typeof yaml === "object" && "metric_directions" in yaml ? yaml.metric_directions : undefined;
  return {
    task,
    workspace,
    declaredDirections:
      declared && typeof declared === "object"
        ? Object.fromEntries(Object.entries(declared).map(([k, v]) => [k, String(v)]))
        : {},
    csv,
    agentModules,
    baselineCommands: runnable.map((p) => (p.endsWith(".sh") ? `bash ${p}` : `python ${p}`)),
    baselineRunnable: !csv || runnable.length > 0,
    groundTruth: truth,
    sampleSubmission: sample,
    copyCandidates: csv ? [...files.keys()].filter((p) => p.endsWith(".csv")).slice(0, 12) : [],
    evaluationFiles: [
      ...task.evaluationPaths.map((path) => ({ path, restored: true })),
      ...helpers.map((path) => ({ path, restored: false })),
    ],
  };
}
