import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type HarborTask, HarborTaskError, loadHarborTask } from "./task.ts";

/** The tasks of a dataset folder, and the folders that could not be read (kept only with `skipInvalid`). */
export interface HarborTaskSet {
  root: string;
  tasks: Map<string, HarborTask>;
  /** Folders left out (only when `skipInvalid`), each with its error naming folder and file. */
  skipped: HarborTaskError[];
}

/**
 * Reads a dataset folder of Harbor task folders (every non-hidden subfolder is a task), or only `names` of it.
 * Any bad task throws (its {@link HarborTaskError} names folder and file; several are joined) unless
 * `skipInvalid`, which leaves them out and lists them in `skipped`. A `names` entry with no folder always throws.
 * @example const set = await loadHarborTaskSet("data/harbor", { names: ["hello-file"] });
 */
export async function loadHarborTaskSet(
  dataset: string,
  options: { names?: string[]; skipInvalid?: boolean } = {},
): Promise<HarborTaskSet> {
  const root = resolve(dataset);
  if (
    !(await stat(root).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    throw new HarborTaskError(root, ".", "dataset folder not found");
  const all = (await readdir(root, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => e.name)
    .sort();
  const names = options.names ?? all;
  const missing = names.filter((n) => !all.includes(n));
  if (missing.length > 0)
    throw new HarborTaskError(
      root,
      missing.join(", "),
      `no such task folder (the dataset has ${all.length}: ${all.slice(0, 10).join(", ")}${all.length > 10 ? ", …" : ""})`,
    );
  const tasks = new Map<string, HarborTask>();
  const errors: HarborTaskError[] = [];
  for (const name of [...new Set(names)]) {
    try {
      tasks.set(name, await loadHarborTask(join(root, name)));
    } catch (error) {
      if (!(error instanceof HarborTaskError)) throw error;
      errors.push(error);
    }
  }
  if (errors.length > 0 && !options.skipInvalid) {
    const first = errors[0] as HarborTaskError;
    if (errors.length === 1) throw first;
    throw new HarborTaskError(
      root,
      `${errors.length} task folders`,
      `\n  ${errors.map((e) => e.message).join("\n  ")}\n(set [env] skip_invalid_tasks = true to run without them)`,
    );
  }
  return { root, tasks, skipped: errors };
}
