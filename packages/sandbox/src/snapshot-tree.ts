import { constants } from "node:fs";
import {
  chmod,
  copyFile,
  lchown,
  link,
  lstat,
  lutimes,
  mkdir,
  readdir,
  readlink,
  symlink,
} from "node:fs/promises";
import { join } from "node:path";

/** A stored tree and, per regular file, what its source was when copied (inode, change time, size). */
export interface TreeManifest {
  dir: string;
  files: Map<string, string>;
  /** Bytes of the stored regular files (`SnapshotHandle.bytes` without walking the tree again). */
  bytes: number;
}

/**
 * Copies the workspace tree `from` into the existing directory `to` (a stored snapshot), owned by `owner`:
 * directories, regular files and symlinks (never followed), modes and times kept. A file whose source has the same
 * inode, change time (ns; no one can set it) and size as when `previous` (the sandbox's last snapshot, never
 * changed once stored) copied it is a hard link to that copy, so an unchanged 100 MB model costs a `stat`, not a
 * copy; the rest are copied (`COPYFILE_FICLONE`: reflinks where the filesystem has them). `skip`: top-level paths
 * not copied (the shared read-only paths). Returns the new tree's manifest for the next snapshot.
 * @example const m = await snapshotTree("/srv/sandboxes/local-1/workspace", "/run/snapshots/s0-r3-t4", 0, new Set(["data"]), last);
 */
export async function snapshotTree(
  from: string,
  to: string,
  owner: number,
  skip: Set<string>,
  previous?: TreeManifest,
): Promise<TreeManifest> {
  const files = new Map<string, string>();
  let bytes = 0;
  const walk = async (src: string, dest: string, rel: string): Promise<void> => {
    for (const name of await readdir(src)) {
      if (rel === "" && skip.has(name)) continue;
      const s = join(src, name);
      const d = join(dest, name);
      const path = rel === "" ? name : `${rel}/${name}`;
      const info = await lstat(s, { bigint: true });
      if (info.isDirectory()) {
        await mkdir(d);
        await walk(s, d, path);
        await chmod(d, Number(info.mode) & 0o1777);
      } else if (info.isFile()) {
        const key = `${info.ino}:${info.ctimeNs}:${info.size}`;
        files.set(path, key);
        bytes += Number(info.size);
        if (previous?.files.get(path) === key) {
          const linked = await link(join(previous.dir, path), d).then(
            () => true,
            () => false,
          );
          if (linked) continue;
        }
        await copyFile(s, d, constants.COPYFILE_FICLONE);
        await chmod(d, Number(info.mode) & 0o1777);
      } else if (info.isSymbolicLink()) await symlink(await readlink(s), d);
      else continue;
      await lchown(d, owner, owner);
      await lutimes(d, Number(info.atimeMs) / 1000, Number(info.mtimeMs) / 1000);
    }
  };
  await walk(from, to, "");
  return { dir: to, files, bytes };
}
