import { constants } from "node:fs";
import {
  chmod,
  copyFile,
  link,
  lstat,
  lutimes,
  mkdir,
  readlink,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { join } from "node:path";
import type { TarEntry } from "./docker-tar.ts";

/**
 * A stored tree and, per regular file and symlink, the key its source had when listed (`f` or `l`, then inode,
 * change time, size) and the inode of the stored copy.
 */
export interface DeltaManifest {
  dir: string;
  files: Map<string, { key: string; ino: bigint }>;
}

/**
 * The sandbox's file list was not what the delta and the previous tree can complete (a previous copy pruned or
 * changed, a file the sandbox left out that was not unchanged): the caller takes a full snapshot instead.
 */
export class IncompleteDeltaError extends Error {}

/** A workspace-relative path of a member or list entry, or undefined when it could point anywhere else. */
export function relativePath(name: string): string | undefined {
  const parts = name.replace(/^\.\//, "").replace(/\/$/, "").split("/");
  if (parts.length === 1 && (parts[0] === "" || parts[0] === ".")) return "";
  if (parts.some((p) => p === "" || p === "." || p === "..")) return undefined;
  return parts.join("/");
}

function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

/** `key\tpath` records, NUL-terminated (the sandbox's listing of its regular files and symlinks). */
export function parseList(list: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  for (const record of Buffer.from(list).toString("utf8").split("\0")) {
    const tab = record.indexOf("\t");
    if (tab <= 0) continue;
    const path = relativePath(record.slice(tab + 1));
    if (path) out.set(path, record.slice(0, tab));
  }
  return out;
}

/**
 * Builds the complete stored tree `to` (an existing empty directory) of a sandbox's workspace from what the sandbox
 * sent: `list`, its regular files and symlinks with their keys, and `delta`, the members of a tar of its directories
 * and of the files and symlinks that changed since `previous` (the sandbox's last stored tree). A listed one that is
 * not in the delta is a hard link to `previous`'s copy when its key is the one stored there (a copy when linking
 * fails across filesystems); without `previous` (a full snapshot) it is left out (it went while the list was made).
 * Every name is checked: nothing is written outside `to` or through a symlink (a parent must be a directory made
 * here), absolute names and `..` are refused, symlinks are created, never followed, modes lose setuid/setgid.
 * Throws {@link IncompleteDeltaError} when a listed file cannot be completed. Returns the new tree's manifest.
 * @example const m = await storeDelta(list, readTar(deltaTar), "/run/snapshots/s0-r3-t4", last);
 */
export async function storeDelta(
  list: Uint8Array,
  delta: TarEntry[],
  to: string,
  previous?: DeltaManifest,
): Promise<DeltaManifest> {
  const kinds = new Map<string, "dir" | "file" | "link">([["", "dir"]]);
  const dirs: Array<{ path: string; mode: number; mtime: number }> = [];
  const placeable = (path: string | undefined): path is string =>
    path !== undefined && path !== "" && !kinds.has(path) && kinds.get(parentOf(path)) === "dir";
  for (const entry of delta) {
    const path = relativePath(entry.name);
    const mode = entry.mode & 0o1777;
    if (path === "" && entry.type === "dir") dirs.push({ path, mode, mtime: entry.mtime });
    if (!placeable(path)) continue;
    const dest = join(to, path);
    if (entry.type === "dir") {
      await mkdir(dest, { mode: 0o700 });
      kinds.set(path, "dir");
      dirs.push({ path, mode, mtime: entry.mtime });
    } else if (entry.type === "file") {
      await writeFile(dest, entry.data, { flag: "wx", mode: 0o600 });
      await chmod(dest, mode);
      await utimes(dest, entry.mtime, entry.mtime);
      kinds.set(path, "file");
    } else if (entry.type === "symlink") {
      await symlink(entry.linkname, dest);
      await lutimes(dest, entry.mtime, entry.mtime);
      kinds.set(path, "link");
    } else if (entry.type === "hardlink") {
      // another name of a file or symlink stored above (link(2) never follows a symlink)
      const target = relativePath(entry.linkname);
      const kind = target === undefined ? undefined : kinds.get(target);
      if (target === undefined || (kind !== "file" && kind !== "link")) continue;
      await link(join(to, target), dest);
      kinds.set(path, kind);
    }
  }
  const files: DeltaManifest["files"] = new Map();
  for (const [path, key] of parseList(list)) {
    const dest = join(to, path);
    const kind = key.startsWith("l") ? "link" : "file";
    if (!kinds.has(path)) {
      if (!previous) continue;
      const stored = previous.files.get(path);
      if (stored?.key !== key || !placeable(path))
        throw new IncompleteDeltaError(`${path}: neither sent nor unchanged since the last snapshot`);
      await linkUnchanged(join(previous.dir, path), stored.ino, dest, kind);
      kinds.set(path, kind);
    } else if (kinds.get(path) !== kind) continue;
    files.set(path, { key, ino: (await lstat(dest, { bigint: true })).ino });
  }
  // directories last, deepest first: adding their entries changed their times
  for (const d of dirs.sort((a, b) => b.path.length - a.path.length)) {
    const dest = join(to, d.path);
    await chmod(dest, d.mode);
    await utimes(dest, d.mtime, d.mtime);
  }
  return { dir: to, files };
}

/**
 * Hard-links the previous tree's copy `from` (still the `kind` and inode `ino` it stored; link(2) never follows a
 * symlink) to `to`, or copies it where linking fails (another filesystem, too many links).
 */
async function linkUnchanged(from: string, ino: bigint, to: string, kind: "file" | "link"): Promise<void> {
  const info = await lstat(from, { bigint: true }).catch(() => undefined);
  const same = kind === "link" ? info?.isSymbolicLink() : info?.isFile();
  if (!info || !same || info.ino !== ino)
    throw new IncompleteDeltaError(`${from}: the previous snapshot's copy is gone or replaced`);
  try {
    await link(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EXDEV" && code !== "EMLINK") throw new IncompleteDeltaError(`${from}: ${String(error)}`);
    if (kind === "file") await copyFile(from, to, constants.COPYFILE_FICLONE | constants.COPYFILE_EXCL);
    else {
      await symlink(await readlink(from), to);
      const seconds = Number(info.mtimeMs) / 1000;
      await lutimes(to, seconds, seconds);
    }
  }
}
