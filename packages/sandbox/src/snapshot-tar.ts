import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runProcess } from "./process.ts";
import { shellQuote } from "./shell.ts";
import { applyExports, readExports } from "./shell-exports.ts";
import {
  assertRestorable,
  readSnapshotTar,
  type SnapshotStore,
  SnapshotUnavailableError,
} from "./snapshot-store.ts";
import type { Sandbox, SnapshotHandle } from "./types.ts";

/**
 * Saves a workspace tar (`Sandbox.snapshot`), the shell's directory `cwd` and exported variables into `store` (the docker runtimes and
 * the unsandboxed one): the tar lives on this machine, so any runtime, on any Docker host, restores it.
 */
export async function saveTarSnapshot(
  sandbox: Sandbox,
  cwd: string,
  store: SnapshotStore,
  id: string,
): Promise<SnapshotHandle> {
  const exports = await readExports(sandbox);
  const path = await store.place(id, "tar");
  await writeFile(path, await sandbox.snapshot(), { mode: 0o600 });
  return store.commit({ id, format: "tar", path, cwd, ...(exports !== undefined && { exports }) });
}

/**
 * Gives a restored sandbox's shell the snapshot's exported variables (`applyExports`) and puts it into the
 * snapshot's directory (the workspace when that is gone).
 */
export async function restoreShell(
  sandbox: Sandbox,
  from: Pick<SnapshotHandle, "cwd" | "exports">,
): Promise<void> {
  if (from.exports !== undefined) await applyExports(sandbox, from.exports);
  const cwd = from.cwd;
  if (cwd === sandbox.workspace) return;
  const out = await sandbox.exec(`cd -- ${shellQuote(cwd)} 2>/dev/null; true`, 30_000);
  if (out.exitCode !== 0) throw new Error(`cannot enter ${cwd} in the restored sandbox: ${out.output}`);
}

/**
 * A stored snapshot as a workspace tar (for `putArchive` into a container of any host): a "tar" one read, a "tree"
 * one's workspace packed on this machine (symlinks stored as links, hard links within the tree kept), or
 * {@link SnapshotUnavailableError}.
 */
export async function snapshotAsTar(handle: SnapshotHandle): Promise<Uint8Array> {
  if (handle.format === "tar") return readSnapshotTar(handle);
  assertRestorable(handle);
  const out = await runProcess(["tar", "-cf", "-", "-C", storedWorkspace(handle), "."], {
    cwd: "/",
    timeoutMs: 300_000,
  });
  if (out.exitCode !== 0) throw new SnapshotUnavailableError(handle, `tar of its tree failed: ${out.stderr}`);
  return out.stdoutBytes;
}

/**
 * Where a "tree" snapshot keeps the workspace: `path` itself, or `path/workspace` when the tree also holds the
 * agent's outside directories (`SnapshotHandle.outside`; docker lays those apart, `outsideRestore`).
 */
export function storedWorkspace(handle: SnapshotHandle): string {
  return handle.outside ? join(handle.path, "workspace") : handle.path;
}
