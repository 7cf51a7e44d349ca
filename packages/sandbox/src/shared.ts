import { existsSync, lstatSync, readdirSync } from "node:fs";
import { chmod, lstat, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runProcess } from "./process.ts";
import type { TaskFiles } from "./types.ts";

/**
 * How the local runtime avoids copying what did not change (on every filesystem):
 * - the task's read-only paths (`TaskFiles.readOnly`: data, read-only scripts) are never copied: each sandbox,
 *   fork and evaluation mounts them read-only from the task bundle (bwrap `--ro-bind`), and the workspace holds
 *   an empty placeholder (a directory or file nobody can change or replace while it is mounted);
 * - the rest is copied with `cp -a --reflink=auto`: copy-on-write clones (reflinks) on btrfs, XFS (reflink=1),
 *   bcachefs, a plain copy on ext4, tmpfs and overlayfs.
 */

/** One read-only path of a task bundle and where the sandbox sees it. */
export interface SharedPath {
  /** Workspace-relative path (e.g. "data"). */
  path: string;
  /** The pristine copy in the task bundle (`<dir>/workspace/<path>`). */
  src: string;
  dir: boolean;
}

/**
 * The task's read-only paths that exist in its bundle (symlinks are never shared).
 * @example sharedPaths({ key: "t", dir: "/run/tasks/t", readOnly: ["data", "evaluate.py"] })
 */
export function sharedPaths(files: TaskFiles): SharedPath[] {
  const out: SharedPath[] = [];
  for (const path of readOnlyPaths(files)) {
    const src = join(files.dir, "workspace", path);
    const info = lstatSync(src, { throwIfNoEntry: false });
    if (info && !info.isSymbolicLink()) out.push({ path, src, dir: info.isDirectory() });
  }
  return out;
}

/** The task's read-only paths that name something inside the workspace ("", ".", ".." parts and absolute paths dropped). */
export function readOnlyPaths(files: TaskFiles): string[] {
  return files.readOnly.filter(
    (p) => !p.split("/").some((part) => part === ".." || part === "" || part === "."),
  );
}

/** Bundles whose shared paths were made readable by every sandbox uid (once per bundle key). */
const readable = new Set<string>();

/**
 * As root, makes the bundle's read-only paths readable by everyone (`chmod -R a+rX`): the agents and
 * evaluations run as uids of their own and read them through the mount. Once per bundle.
 */
export async function makeShareable(files: TaskFiles, shared: SharedPath[]): Promise<void> {
  if (readable.has(files.key) || shared.length === 0) return;
  const out = await runProcess(["chmod", "-R", "a+rX", ...shared.map((s) => s.src)], {
    cwd: "/",
    timeoutMs: 120_000,
  });
  if (out.exitCode !== 0)
    throw new Error(`making ${files.dir}'s read-only paths readable failed: ${out.stderr}`);
  readable.add(files.key);
}

/**
 * Copies the bundle's workspace into `dest` except the shared paths (one `cp -a --reflink=auto`), and lays the
 * placeholders the shared paths are mounted on.
 * @example await copyWorkspace(files, shared, "/srv/sandboxes/local-1/workspace");
 */
export async function copyWorkspace(files: TaskFiles, shared: SharedPath[], dest: string): Promise<void> {
  const src = join(files.dir, "workspace");
  const top = new Set(shared.filter((s) => !s.path.includes("/")).map((s) => s.path));
  const entries = readdirSync(src)
    .filter((name) => !top.has(name))
    .map((name) => join(src, name));
  if (entries.length > 0) {
    const out = await runProcess(["cp", "-a", "--reflink=auto", ...entries, `${dest}/`], {
      cwd: "/",
      timeoutMs: 120_000,
    });
    if (out.exitCode !== 0) throw new Error(`copying the workspace failed: ${out.stderr}`);
  }
  await placeholders(dest, shared);
}

/**
 * Replaces whatever is at each shared path of `workspace` (a snapshot or a fork may hold anything there) by an
 * empty placeholder of the right kind. Refuses a path whose parent is not a real directory (a symlink could
 * lead the mount elsewhere). Nothing runs in the sandbox while this runs.
 */
export async function placeholders(workspace: string, shared: SharedPath[]): Promise<void> {
  for (const s of shared) {
    const parts = s.path.split("/");
    let parent = workspace;
    for (const part of parts.slice(0, -1)) {
      parent = join(parent, part);
      const info = await lstat(parent).catch(() => undefined);
      if (!info) await mkdir(parent);
      else if (!info.isDirectory())
        await rm(parent, { recursive: true, force: true }).then(() => mkdir(parent));
    }
    const target = join(workspace, s.path);
    const info = await lstat(target).catch(() => undefined);
    if (
      info &&
      (info.isSymbolicLink() || info.isDirectory() !== s.dir || !isEmpty(target, info.isDirectory()))
    ) {
      await chmod(target, 0o700).catch(() => undefined);
      await rm(target, { recursive: true, force: true });
    }
    if (!existsSync(target)) {
      if (s.dir) await mkdir(target);
      else await writeFile(target, "");
    }
  }
}

function isEmpty(path: string, dir: boolean): boolean {
  return dir ? readdirSync(path).length === 0 : lstatSync(path).size === 0;
}
