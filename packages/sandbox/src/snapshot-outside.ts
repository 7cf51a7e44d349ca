import { mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { AIR_DIR } from "./docker-layout.ts";
import type { TarEntry } from "./docker-tar.ts";
import { runProcess } from "./process.ts";
import { shellQuote } from "./shell.ts";
import { storeDelta } from "./snapshot-delta.ts";
import type { SnapshotHandle } from "./snapshot-handle.ts";
import { assertRestorable, SnapshotUnavailableError } from "./snapshot-store.ts";

/**
 * The agent's directories outside its workspace that a docker workspace sandbox's stored snapshot carries, in order
 * (`SnapshotHandle.outside`; the tree holds `workspace/` and `outside/<i>/`, the local layout). Its home
 * directory's dot-dirs and /dev/shm are not carried. A task's own image adds the task's writable dirs
 * (`imageOutsideDirs`).
 */
export const OUTSIDE_DIRS = ["/tmp", "/var/tmp"];

/** The snapshot delta's member holding the tar of the agent's outside files (names relative to `/`). */
export const OUTSIDE_MEMBER = "outside.tar";

/**
 * Root commands storing the agent `user`'s files in `dirs` (each a real directory; else left out) as one tar
 * `<state>/outside.tar`, in two processes: `find -P` (never follows a link) lists their directories, regular files
 * and symlinks, pruning at anything not owned by `user` (a root-owned file, a hard link to one, whatever lies below
 * a directory that is not the agent's); FIFOs, sockets and devices are not listed, so never opened; tar takes
 * exactly that list (`--no-recursion`, names verbatim, never following a link). All of it every time (usually
 * small).
 */
export function outsideCommands(user: string, state: string, dirs: readonly string[]): string[] {
  const names = `${state}/outside.names`;
  const tar = `${state}/${OUTSIDE_MEMBER}`;
  const rel = dirs.map((d) => shellQuote(d.slice(1))).join(" ");
  return [
    `o=; for d in ${rel}; do [ -d "/$d" ] && [ ! -L "/$d" ] && o="$o $d"; done; : > ${names}`,
    `[ -z "$o" ] || (cd / && find -P $o -mindepth 1 \\( ! -user ${shellQuote(user)} -prune \\) -o \\( -type d -o -type f -o -type l \\) -print0) > ${names} || exit 8`,
    `if [ -s ${names} ]; then tar -b 1 -C / --null --no-recursion --verbatim-files-from -T ${names} -cf ${tar}; [ $? -le 1 ] || exit 8; else tar -b 1 -cf ${tar} -T /dev/null || exit 8; fi`,
  ];
}

/**
 * Stores the agent's files outside its workspace (members named relative to `/`, e.g. `tmp/x`) as `path/outside/<i>`
 * for the i-th of `dirs`: laid out with every name checked (`storeDelta` into a scratch tree under `path`, where
 * the directories above them are made first; nothing listed to link: a full copy), then moved.
 */
export async function storeOutside(
  members: TarEntry[],
  path: string,
  dirs: readonly string[],
): Promise<void> {
  const scratch = join(path, "outside.partial");
  await mkdir(scratch, { mode: 0o700 });
  const above = new Set(
    dirs.flatMap((d) =>
      d
        .slice(1)
        .split("/")
        .map((_, i, a) => a.slice(0, i + 1).join("/")),
    ),
  );
  const made: TarEntry[] = [...above]
    .sort()
    .map((name) => ({ name, type: "dir", mode: 0o700, mtime: 0, linkname: "", data: new Uint8Array() }));
  await storeDelta(new Uint8Array(), [...made, ...members], scratch);
  await mkdir(join(path, "outside"), { mode: 0o700 });
  for (const [i, dir] of dirs.entries())
    await rename(join(scratch, dir.slice(1)), join(path, "outside", String(i)));
  await rm(scratch, { recursive: true });
}

/** Where a docker workspace sandbox's restore unpacks the stored outside directories (root-only) first. */
export const OUTSIDE_STAGE = `${AIR_DIR}/outside`;

/**
 * The stored outside directories of `handle` that the container has (those of `dirs`, default
 * {@link OUTSIDE_DIRS}: others, e.g. a local tree's task dirs, are left out), as one tar of `<i>/…` for `stage`,
 * and the root script that lays them out after `putArchive`: owned by the agent `user` (never through a link),
 * each top entry moved into its directory where that name is free (a fresh sandbox has only the image's files
 * there). Undefined when the handle carries none.
 * @example const o = await outsideRestore(handle, "agent"); // putArchive(o.tar, OUTSIDE_STAGE); rootRun(o.script)
 */
export async function outsideRestore(
  handle: SnapshotHandle,
  user: string,
  dirs: readonly string[] = OUTSIDE_DIRS,
  stage = OUTSIDE_STAGE,
): Promise<{ tar: Uint8Array; script: string } | undefined> {
  const carried = (handle.outside ?? []).flatMap((dest, i) => (dirs.includes(dest) ? [{ dest, i }] : []));
  if (handle.format !== "tree" || carried.length === 0) return undefined;
  assertRestorable(handle);
  const out = await runProcess(
    ["tar", "-cf", "-", "-C", join(handle.path, "outside"), ...carried.map((d) => String(d.i))],
    { cwd: "/", timeoutMs: 300_000 },
  );
  if (out.exitCode !== 0)
    throw new SnapshotUnavailableError(handle, `tar of its outside dirs failed: ${out.stderr}`);
  const script = [
    `chown -hR ${shellQuote(user)}: ${stage} && chown root:root ${stage} && chmod 700 ${stage} || exit 9`,
    ...carried.map(({ dest, i }) => {
      const d = shellQuote(dest);
      return (
        `[ -d ${d} ] && [ ! -L ${d} ] && [ -d ${stage}/${i} ] && (cd ${stage}/${i} && for e in * .[!.]* ..?*; do ` +
        `{ [ -e "$e" ] || [ -L "$e" ]; } && [ ! -e ${d}/"$e" ] && [ ! -L ${d}/"$e" ] && mv -- "$e" ${d}/; done; true)`
      );
    }),
    `rm -rf ${stage}`,
  ].join("\n");
  return { tar: out.stdoutBytes, script };
}

/** The root command making `stage` empty and root-only (before `putArchive`). */
export function stageOutside(stage: string): string {
  return `rm -rf ${stage} && mkdir -m 700 ${stage}`;
}

/** {@link stageOutside} of {@link OUTSIDE_STAGE}. */
export const STAGE_OUTSIDE = stageOutside(OUTSIDE_STAGE);
