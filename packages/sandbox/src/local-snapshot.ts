import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { copyTree } from "./fork-copy.ts";
import type { SandboxHost } from "./local-host.ts";
import { snapshotTree, type TreeManifest } from "./snapshot-tree.ts";

/** The agent's writable directories outside its workspace, as it sees them (`dest`) and on the host (`src`). */
export function outsideDirs(host: SandboxHost): { dest: string; src: string }[] {
  return [{ dest: "/tmp", src: host.tmp }, ...host.dirs];
}

/**
 * The outside directories `to` has and `from` has too, paired by where the agent sees them (a fork copies them).
 * @example for (const p of outsidePairs(parent, child)) await copyTree(p.from, p.to, uid, new Set());
 */
export function outsidePairs(
  from: SandboxHost,
  to: SandboxHost,
): { dest: string; from: string; to: string }[] {
  const sources = outsideDirs(from);
  return outsideDirs(to).flatMap((d) => {
    const source = sources.find((s) => s.dest === d.dest);
    return source ? [{ dest: d.dest, from: source.src, to: d.src }] : [];
  });
}

/**
 * Stores a local sandbox's files into the new directory `dest`, owned by air: the workspace (without the `skip`ped
 * shared paths) in `dest/workspace`, and each of {@link outsideDirs} in `dest/outside/<i>` (`snapshotTree`: symlinks
 * never followed, FIFOs, sockets and devices left out, never opened; a file unchanged since the sandbox's last
 * snapshot, `previous`, keyed by where the agent sees it, is a hard link to that copy). The sandbox's processes
 * must be stopped. Returns the stored outside paths, in order (`SnapshotHandle.outside`), and the stored bytes.
 * @example const { outside, bytes } = await saveSandboxTree(host, "/run/snapshots/s0-r3-t4", new Set(["data"]), manifests);
 */
export async function saveSandboxTree(
  host: SandboxHost,
  dest: string,
  skip: Set<string>,
  previous: Map<string, TreeManifest>,
): Promise<{ outside: string[]; bytes: number }> {
  const owner = process.getuid?.() ?? 0;
  const workspace = join(dest, "workspace");
  await mkdir(workspace, { mode: 0o700 });
  const stored = await snapshotTree(host.workspace, workspace, owner, skip, previous.get(""));
  previous.set("", stored);
  let bytes = stored.bytes;
  const outside = outsideDirs(host);
  await mkdir(join(dest, "outside"), { mode: 0o700 });
  for (const [i, dir] of outside.entries()) {
    const to = join(dest, "outside", String(i));
    await mkdir(to, { mode: 0o700 });
    const tree = await snapshotTree(dir.src, to, owner, new Set(), previous.get(dir.dest));
    previous.set(dir.dest, tree);
    bytes += tree.bytes;
  }
  return { outside: outside.map((d) => d.dest), bytes };
}

/**
 * Fills a new local sandbox's (empty) workspace, /tmp and writable dirs from a stored tree, owned by its agent:
 * `outside` as the handle names them (a path this sandbox has no directory for is left out); without `outside`
 * (a tree stored before they were carried) `tree` is the workspace alone.
 * @example await restoreSandboxTree(host, handle.path, handle.outside);
 */
export async function restoreSandboxTree(host: SandboxHost, tree: string, outside?: string[]): Promise<void> {
  if (!outside) return copyTree(tree, host.workspace, host.uid, new Set());
  await copyTree(join(tree, "workspace"), host.workspace, host.uid, new Set());
  const dirs = outsideDirs(host);
  for (const [i, dest] of outside.entries()) {
    const dir = dirs.find((d) => d.dest === dest);
    if (dir) await copyTree(join(tree, "outside", String(i)), dir.src, host.uid, new Set());
  }
}
