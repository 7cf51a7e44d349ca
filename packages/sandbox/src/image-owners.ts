import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { withTimeout } from "./docker-client.ts";
import { tarOf } from "./docker-exec.ts";
import { OWNERS_MEMBER } from "./docker-snapshot.ts";
import { CONTROL_TIMEOUT_MS, type ImagePlan, PRIVATE } from "./image-container.ts";
import { shellQuote } from "./shell.ts";
import { relativePath } from "./snapshot-delta.ts";
import type { SnapshotHandle } from "./snapshot-handle.ts";

/**
 * The owners a stored tree recorded (`SnapshotPlace.owners`): numeric `uid:gid` per workspace path ("" for the
 * WORKDIR itself), grouped by owner; a path that could point outside the WORKDIR is dropped.
 * @example ownersOf(bytes) // Map { "0:0" => ["", "lib/data.py"] }
 */
export function ownersOf(recorded: Uint8Array): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const record of Buffer.from(recorded).toString("utf8").split("\0")) {
    const tab = record.indexOf("\t");
    const owner = record.slice(0, tab);
    const path = tab > 0 ? relativePath(record.slice(tab + 1)) : undefined;
    if (path === undefined || !/^\d+:\d+$/.test(owner)) continue;
    const paths = out.get(owner);
    if (paths) paths.push(path);
    else out.set(owner, [path]);
  }
  return out;
}

/**
 * Gives the entries of a restored WORKDIR (laid from `handle`'s tree and owned by the agent) the owners the tree
 * recorded: one NUL list per owner staged under the root-only {@link PRIVATE}, `chown -h` (never through a link)
 * from inside the WORKDIR. Before the agent's shell starts, so nothing of the agent's runs meanwhile.
 */
export async function restoreImageOwners(
  container: Docker.Container,
  plan: ImagePlan,
  handle: SnapshotHandle,
  root: (script: string) => Promise<string>,
): Promise<void> {
  const file = join(handle.path, OWNERS_MEMBER);
  if (!existsSync(file)) return;
  const owners = ownersOf(await readFile(file));
  if (owners.size === 0) return;
  const stage = `${PRIVATE}/owners`;
  const lists = await mkdtemp(join(tmpdir(), "air-owners-"));
  let tar: Buffer;
  try {
    for (const [i, paths] of [...owners.values()].entries())
      await writeFile(join(lists, String(i)), paths.map((p) => `./${p}\0`).join(""));
    tar = await tarOf(lists);
  } finally {
    await rm(lists, { recursive: true, force: true });
  }
  await root(`mkdir -p ${PRIVATE} && chmod 700 ${PRIVATE} && rm -rf ${stage} && mkdir -m 700 ${stage}`);
  await withTimeout(container.putArchive(tar, { path: stage }), CONTROL_TIMEOUT_MS, "putArchive owners");
  const ws = shellQuote(plan.workdir);
  const chowns = [...owners.keys()].map((o, i) => `xargs -0 -r chown -h -- ${o} < ${stage}/${i} || exit 1`);
  await root([`cd -P -- ${ws} || exit 3`, ...chowns, `rm -rf ${stage}`].join("\n"));
}
