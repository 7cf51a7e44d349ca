import { resolve } from "node:path";
import type { MlgymConfig } from "./config.ts";
import { loadTask, type Task } from "./task.ts";

/** A config's tasks, keyed by task id (the one key used everywhere: examples, per-task maps, eval tables). */
export interface TaskSet {
  /** Every train and eval task, by id. */
  byId: Map<string, Task>;
  /** The id of each name the config used (`titanic` -> `titanicSurvival`; an id maps to itself). */
  idOf: Map<string, string>;
}

/**
 * The entry of a per-task map (`metric_directions`, `priority_metric`, `secret_files`) for a task, whether
 * the map names it by id (`titanicSurvival`) or by the name the config used (`titanic`).
 * @example perTask({ titanic: "accuracy" }, "titanicSurvival", "titanic") // "accuracy"
 */
export function perTask<T>(map: Record<string, T>, id: string, name: string): T | undefined {
  return map[id] ?? map[name];
}

/**
 * Loads every task a config names (train and eval; by file name or id), applying its per-task maps. A task
 * named twice (once as `titanic`, once as `titanicSurvival`) is loaded once.
 * @example const { byId, idOf } = await loadTaskSet(config, "/work/main"); byId.get(idOf.get("apartmentRent")!)
 */
export async function loadTaskSet(config: MlgymConfig, root: string): Promise<TaskSet> {
  const byId = new Map<string, Task>();
  const idOf = new Map<string, string>();
  for (const name of new Set([...config.tasks, ...(config.eval_tasks ?? [])])) {
    const probe = await loadTask(root, name);
    idOf.set(name, probe.id);
    if (byId.has(probe.id)) continue;
    const task = await loadTask(root, name, {
      directions: perTask(config.metric_directions, probe.id, name),
      priorityMetric: perTask(config.priority_metric, probe.id, name),
    });
    for (const extra of perTask(config.secret_files, task.id, name) ?? [])
      task.secretFiles.push(resolve(root, extra));
    byId.set(task.id, task);
  }
  return { byId, idOf };
}
