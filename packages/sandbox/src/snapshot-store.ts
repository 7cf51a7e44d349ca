import { existsSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SnapshotHandle } from "./snapshot-handle.ts";

/** Ids a store accepts: they name files. */
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

/**
 * Why a snapshot cannot be restored: its files are gone (pruned, deleted by hand, another machine) or unreadable.
 * A caller that resumes from it starts over instead (`code` is always "SNAPSHOT_UNAVAILABLE").
 * @example try { await runtime.acquire(files, { rolloutId, restore }); } catch (e) { if (e instanceof SnapshotUnavailableError) ... }
 */
export class SnapshotUnavailableError extends Error {
  readonly code = "SNAPSHOT_UNAVAILABLE" as const;
  constructor(
    readonly handle: SnapshotHandle,
    reason: string,
  ) {
    super(`snapshot ${handle.id} (${handle.path}) cannot be restored: ${reason}`);
  }
}

/**
 * A directory of stored sandbox snapshots: each is its workspace (`<id>/`, a tree of reflinked or copied files, or
 * `<id>.tar`) and its handle (`<id>.json`), written last, so a listed snapshot is complete. Any runtime saves into
 * one (`Runtime.saveSnapshot`) and restores from a handle (`Runtime.acquire(files, { restore })`); a handle is
 * plain JSON that another process (`rl --resume`) or, for tars, a runtime on another Docker host can use.
 * @example
 * const store = new SnapshotStore("outputs/run/snapshots");
 * const handle = await runtime.saveSnapshot(box, store, "s0-r3-t4");
 * await store.prune((id) => id.startsWith("s0-r3-"));
 */
export class SnapshotStore {
  constructor(readonly dir: string) {}

  /** Where the workspace of snapshot `id` goes (`format` "tree": a directory; "tar": a file). */
  async place(id: string, format: SnapshotHandle["format"]): Promise<string> {
    if (!ID.test(id))
      throw new Error(`snapshot id ${JSON.stringify(id)}: letters, digits, '.', '_', '-' only`);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, format === "tar" ? `${id}.tar` : id);
    await rm(path, { recursive: true, force: true });
    return path;
  }

  /**
   * Writes the handle of a workspace stored at `place(id, format)`: from now on it is listed. `bytes`, when the
   * saver counted them as it stored the files, spares walking the tree again.
   */
  async commit(
    handle: Omit<SnapshotHandle, "bytes" | "createdAtMs"> & { bytes?: number },
  ): Promise<SnapshotHandle> {
    const full: SnapshotHandle = {
      ...handle,
      bytes:
        handle.bytes ??
        (handle.format === "tar" ? (await stat(handle.path)).size : await treeBytes(handle.path)),
      createdAtMs: Date.now(),
    };
    const file = join(this.dir, `${handle.id}.json`);
    await writeFile(`${file}.partial`, JSON.stringify(full));
    await rename(`${file}.partial`, file);
    return full;
  }

  /** The snapshots stored here (complete ones only), oldest first. */
  async list(): Promise<SnapshotHandle[]> {
    if (!existsSync(this.dir)) return [];
    const out: SnapshotHandle[] = [];
    for (const name of await readdir(this.dir)) {
      if (!name.endsWith(".json")) continue;
      const handle = await readFile(join(this.dir, name), "utf8")
        .then((text) => JSON.parse(text) as SnapshotHandle)
        .catch(() => undefined);
      if (handle) out.push(handle);
    }
    return out.sort((a, b) => a.createdAtMs - b.createdAtMs || a.id.localeCompare(b.id));
  }

  /**
   * Removes the snapshots whose id `which` accepts, handle first (a half-removed one is never listed). Reads names
   * only, no handle: a save prunes its rollout's older snapshots in a store that holds every rollout's.
   * Returns the removed ids, sorted.
   */
  async prune(which: (id: string) => boolean): Promise<string[]> {
    if (!existsSync(this.dir)) return [];
    const ids = (await readdir(this.dir))
      .filter((name) => name.endsWith(".json"))
      .map((name) => name.slice(0, -".json".length))
      .filter((id) => ID.test(id) && which(id))
      .sort();
    for (const id of ids) {
      await rm(join(this.dir, `${id}.json`), { force: true });
      await rm(join(this.dir, id), { recursive: true, force: true });
      await rm(join(this.dir, `${id}.tar`), { force: true });
    }
    return ids;
  }
}

/**
 * Removes what a save cut short left in `store` (a kill -9 between `place` and `commit`): every stored workspace
 * (`<id>/`, `<id>.tar`) without its handle, and half-written handles. Only while nothing saves into the store (`rl
 * --resume`, before any rollout runs): a save in progress is incomplete too. Returns the names removed.
 * @example await sweepIncomplete(new SnapshotStore("outputs/run/snapshots")); // ["s1-r3-t2"]
 */
export async function sweepIncomplete(store: SnapshotStore): Promise<string[]> {
  if (!existsSync(store.dir)) return [];
  const names = await readdir(store.dir);
  const handles = new Set(names.filter((n) => n.endsWith(".json")));
  const removed: string[] = [];
  for (const name of names) {
    if (name.endsWith(".json")) continue;
    const id = name.endsWith(".json.partial")
      ? undefined
      : name.endsWith(".tar")
        ? name.slice(0, -".tar".length)
        : name;
    if (id !== undefined && handles.has(`${id}.json`)) continue;
    await rm(join(store.dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/** Checks that a handle's workspace is there before a runtime restores it. */
export function assertRestorable(handle: SnapshotHandle): void {
  if (!existsSync(handle.path)) throw new SnapshotUnavailableError(handle, "its files are gone");
}

/** A stored tar's bytes, or {@link SnapshotUnavailableError}. */
export async function readSnapshotTar(handle: SnapshotHandle): Promise<Uint8Array> {
  if (handle.format !== "tar")
    throw new SnapshotUnavailableError(handle, "not a tar (a local tree snapshot)");
  const bytes = await readFile(handle.path).catch((error: unknown) => {
    throw new SnapshotUnavailableError(handle, String(error));
  });
  if (bytes.length !== handle.bytes)
    throw new SnapshotUnavailableError(handle, `${bytes.length} bytes stored, ${handle.bytes} written`);
  return bytes;
}

/**
 * Bytes of the regular files under `dir`, links never followed (Bun's recursive `readdir` descends into symlinked
 * directories: an agent's `ln -s / x` would make a root process walk the host).
 */
async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await treeBytes(path);
    else if (entry.isFile()) total += (await lstat(path)).size;
  }
  return total;
}
