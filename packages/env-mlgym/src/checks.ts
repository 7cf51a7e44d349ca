import { existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { AuditFindings, CheckResult } from "@air/core";
import { bwrapProblem } from "@air/sandbox";
import type { MlgymConfig } from "./config.ts";
import { forgeChecks } from "./guard/forgeable.ts";
import { KNOWN_TASK_SECRET_FILES } from "./known-tasks.ts";
import { loadTask, type Task, taskFile } from "./task.ts";

function fail(name: string, message: string): CheckResult {
  return { name, status: "fail", message };
}

function ok(name: string, message: string): CheckResult {
  return { name, status: "ok", message };
}

/** Checks of one loaded task: evaluation files in its starter code, baseline scores, known ground truth. */
function taskChecks(label: string, task: Task, root: string): CheckResult[] {
  const out: CheckResult[] = [];
  const missingEval = task.evaluationPaths.filter((path) => {
    const source = task.starterCode.find((s) => basename(s) === path.split("/")[0]);
    return !source || !existsSync(join(source, ...path.split("/").slice(1)));
  });
  out.push(
    missingEval.length === 0
      ? ok(`${label}: evaluation files`, task.evaluationPaths.join(", "))
      : fail(
          `${label}: evaluation files`,
          `${task.file}: evaluation_paths ${missingEval.join(", ")} not among the starter_code files`,
        ),
  );
  const baseline = Object.keys(task.baselineScores);
  out.push(
    baseline.length > 0
      ? ok(`${label}: baseline scores`, JSON.stringify(task.baselineScores))
      : fail(`${label}: baseline scores`, `${task.file}: baseline_scores is empty (rewards compare to it)`),
  );
  const missingTruth = (KNOWN_TASK_SECRET_FILES[task.id] ?? [])
    .map((p) => resolve(root, p))
    .filter((p) => !existsSync(p));
  if (missingTruth.length > 0)
    out.push(fail(`${label}: ground truth`, `${missingTruth.join(", ")} not found (its evaluator reads it)`));
  if (task.requirementsPath)
    out.push({
      name: `${label}: requirements`,
      status: "skip",
      message: `${task.file}: requirements_path ${task.requirementsPath} is not installed by air; the sandbox's Python must already have it`,
    });
  if (task.entrypoint === "LMSubmissionTasks")
    out.push(
      fail(
        `${label}: GPU`,
        `${task.file}: LMSubmissionTasks train and evaluate with torchrun on a GPU; give the docker runtime docker.gpu_ids (or [deployment] env_gpu_ids)`,
      ),
    );
  return out;
}

/**
 * Checks before a run (`rl validate`, `rl check`): loads every task of the config (task YAML, dataset YAMLs,
 * `data_path`, starter code, sample submission, evaluation files, baseline scores) and, for the local
 * runtime, that bubblewrap can start a sandbox; and that no task is forgeable (`forgeChecks`: an evaluation
 * that cannot keep the agent's code out of the scorer's process, or a critical finding of the latest audit in
 * `audit`, the launcher's `ctx.audit`) unless `env.allow_forgeable` names it. A failure names the exact missing
 * path and, where one is known, the command that makes it (e.g. house price's `_helpers/_generate_split.py`).
 * Never throws.
 * @example
 * const results = await checkTasks(config, "/work/main");
 * results.filter((r) => r.status === "fail").map((r) => r.message)
 */
export async function checkTasks(
  config: MlgymConfig,
  configDir: string,
  audit?: AuditFindings,
  /** `rl validate`: the task files only (no forge checks, no sandbox probe); a missing root is a `skip`. */
  filesOnly = false,
): Promise<CheckResult[]> {
  const root = resolve(configDir, config.mlgym_root);
  if (!existsSync(root))
    return [
      filesOnly
        ? {
            name: "MLGym tasks",
            status: "skip",
            message: `not loaded: the task root ${root} (env.mlgym_root = "${config.mlgym_root}") is not on this machine`,
          }
        : fail("MLGym root", `${root} does not exist (env.mlgym_root = "${config.mlgym_root}")`),
    ];
  const out: CheckResult[] = [ok("MLGym root", root)];
  const seen = new Set<string>();
  const loaded: { name: string; task: Task }[] = [];
  for (const name of new Set([...config.tasks, ...(config.eval_tasks ?? [])])) {
    const label = `task ${name}`;
    const file = taskFile(root, name);
    if (!existsSync(file)) {
      out.push(
        fail(
          label,
          `${file} does not exist, and no task YAML in ${join(root, "configs", "tasks")} has id ${name}`,
        ),
      );
      continue;
    }
    try {
      const task = await loadTask(root, name);
      if (seen.has(task.id)) continue;
      seen.add(task.id);
      out.push(ok(label, task.id === name ? file : `${file} (id ${task.id})`));
      out.push(...taskChecks(label, task, root));
      loaded.push({ name, task });
    } catch (error) {
      out.push(fail(label, (error as Error).message));
    }
  }
  if (filesOnly) return out;
  out.push(...forgeChecks(loaded, config.allow_forgeable, audit));
  if (config.runtime === "local" && config.local.isolation === "bwrap") {
    const asRoot = process.getuid?.() === 0;
    const problem = await bwrapProblem(asRoot ? { kind: "setpriv", uid: 65534 } : { kind: "userns" });
    out.push(
      problem
        ? fail(
            "local sandbox (bwrap)",
            `bwrap cannot start a sandbox: ${problem}; install bubblewrap, or set env.runtime = "docker", or env.local.isolation = "none" (no isolation)`,
          )
        : ok("local sandbox (bwrap)", "bwrap starts a sandbox"),
    );
  }
  return out;
}
