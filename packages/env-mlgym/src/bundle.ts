import { createHash } from "node:crypto";
import { chmod, cp, lstat, mkdir, readdir, readFile, stat } from "node:fs/promises";
import { basename, join, relative, sep } from "node:path";
import { AirError } from "@air/core";
import { removeTree, type TaskFiles } from "@air/sandbox";
import type { Task } from "./task.ts";

async function hashTree(path: string, hash: ReturnType<typeof createHash>): Promise<void> {
  const info = await stat(path);
  if (info.isDirectory()) {
    for (const entry of (await readdir(path)).sort()) {
      hash.update(`d:${entry}\n`);
      await hashTree(join(path, entry), hash);
    }
  } else hash.update(await readFile(path));
}

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir + sep);
}

/**
 * Lays out a task on the host as `<cacheDir>/<id>-<hash>/{workspace,evaluation}`: the workspace gets the
 * starter code (at its root) and the datasets (under `data/`) minus every secret file; `evaluation/` gets
 * pristine copies of the evaluation scripts, the task's pristine files (e.g. a game's opponent) and the secret
 * files. Nothing in `evaluation/` is visible to the
 * agent before an evaluation; an evaluation lays it over a fresh copy of the workspace.
 * @example const files = await buildTaskFiles(task, "/tmp/air-cache"); // files.dir/workspace/train.py
 */
export async function buildTaskFiles(task: Task, cacheDir: string): Promise<TaskFiles> {
  const hash = createHash("sha256");
  hash.update(JSON.stringify([task.id, task.evaluationPaths, task.pristineFiles, task.secretFiles]));
  for (const p of [...task.starterCode, ...task.datasets.map((d) => d.dataPath), ...task.secretFiles]) {
    hash.update(`f:${p}\n`);
    await hashTree(p, hash);
  }
  const key = `${task.id.replace(/[^A-Za-z0-9_.-]/g, "_")}-${hash.digest("hex").slice(0, 12)}`;
  const dir = join(cacheDir, key);
  const workspace = join(dir, "workspace");
  const evaluation = join(dir, "evaluation");
  await removeTree(dir);
  await mkdir(workspace, { recursive: true });
  await mkdir(evaluation, { recursive: true });
  const secret = new Set(task.secretFiles);
  const notSecret = (src: string) => !secret.has(src);
  for (const dataset of task.datasets) {
    await cp(dataset.dataPath, join(workspace, "data"), { recursive: true, filter: notSecret });
  }
  for (const src of task.starterCode) {
    await cp(src, join(workspace, basename(src)), { recursive: true, filter: notSecret });
  }
  for (const path of new Set([...task.evaluationPaths, ...task.pristineFiles])) {
    const source = task.starterCode.find((s) => basename(s) === path.split("/")[0]);
    if (!source) {
      throw new AirError(
        "CONFIG_INVALID",
        `task ${task.file}: evaluation_paths/pristine_files entry ${path} is not in starter_code`,
        {
          plugin: "mlgym",
        },
      );
    }
    await cp(join(source, ...path.split("/").slice(1)), join(evaluation, path), { recursive: true });
  }
  for (const file of task.secretFiles) {
    const dataset = task.datasets.find((d) => inside(file, d.dataPath));
    const target = dataset
      ? join(evaluation, "data", relative(dataset.dataPath, file))
      : join(evaluation, basename(file));
    await cp(file, target, { recursive: true });
  }
  const readOnly = task.datasets.length > 0 ? ["data"] : [];
  if (task.evaluationReadOnly) readOnly.push(...task.evaluationPaths);
  // MLGym's reset makes them mode 555 (`chmod -R 555` of each entry of data/, `chmod 555` of each evaluation
  // path): `ls` shows `evaluate.py*`. The runtimes keep the bundle's modes (bind mounts, hard links, copies).
  if (task.datasets.length > 0)
    for (const entry of await readdir(join(workspace, "data")))
      await chmod555(join(workspace, "data", entry));
  if (task.evaluationReadOnly) for (const path of task.evaluationPaths) await chmod555(join(workspace, path));
  return { key, dir, readOnly };
}

/** `chmod -R 555 path` (links not followed; a missing path is left alone). */
async function chmod555(path: string): Promise<void> {
  const info = await lstat(path).catch(() => undefined);
  if (!info || info.isSymbolicLink()) return;
  if (info.isDirectory()) for (const entry of await readdir(path)) await chmod555(join(path, entry));
  await chmod(path, 0o555);
}
