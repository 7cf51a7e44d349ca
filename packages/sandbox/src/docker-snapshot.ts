import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AIR_DIR } from "./docker-layout.ts";
import { onlyFileOfTar, readTar } from "./docker-tar.ts";
import { readOnlyPaths } from "./shared.ts";
import { shellQuote } from "./shell.ts";
import { type DeltaManifest, IncompleteDeltaError, storeDelta } from "./snapshot-delta.ts";
import type { SnapshotHandle } from "./snapshot-handle.ts";
import { OUTSIDE_DIRS, OUTSIDE_MEMBER, outsideCommands, storeOutside } from "./snapshot-outside.ts";
import type { SnapshotStore } from "./snapshot-store.ts";
import type { TaskFiles } from "./types.ts";

export {
  OUTSIDE_DIRS,
  OUTSIDE_STAGE,
  outsideRestore,
  STAGE_OUTSIDE,
} from "./snapshot-outside.ts";

/**
 * A docker workspace sandbox's root-only state of its stored snapshots: the tick files of the last two listings (`tick0`,
 * `tick1`), the `token` naming the last snapshot and its tick, and the last list and delta.
 */
export const SNAPSHOT_DIR = `${AIR_DIR}/snapshot`;

/**
 * How long (ms) the agent stays stopped at most after its files were listed, until the kernel's coarse clock (which
 * stamps change times) has moved past the listing's tick: a file changed later then has a later change time.
 */
const TICK_WAIT_MS = 2000;

/**
 * A delta of at most this many bytes comes back in the root shell's output, base64 (a few hundred KB, far below the
 * shell's cap, length-checked); a larger one through the engine's archive API, whose every call costs tens of ms.
 */
const INLINE_BYTES = 256 * 1024;

/** The line before an inline delta: `<MARK> <token> <delta bytes>`, or `<MARK> <token> archive`. */
const MARK = "AIRDELTA";

/** The delta's member holding the file list (no `./`, which every workspace member has). */
const LIST_MEMBER = "list";

/** The delta's member (and the stored tree's file) naming the owner of each entry that is not the agent's. */
export const OWNERS_MEMBER = "owners";

/** A `find -path` pattern matching `path` literally. */
function globQuote(path: string): string {
  return path.replace(/[*?[\]\\]/g, "\\$&");
}

/**
 * The root script of one snapshot of `workspace`, in few processes (each costs milliseconds in a busy container):
 * agent processes stopped; a tick file touched (the time of this listing); the workspace (a real directory,
 * entered once, so every later step is relative to it) listed with `find -P` (never follows a link) without the
 * read-only paths: one `key\tpath` record per regular file and symlink, NUL-terminated (key: type, inode, change
 * time, size); then one tar walk (tar never follows a link) of every directory and of what changed since the tick
 * of snapshot `prev` (`--newer`: change or modification time not older; everything when the container's `token`
 * does not name `prev`), the list appended as member `list`, and the agent's files outside its workspace as members
 * `outside.tar` (`outsideCommands`). Once the coarse clock that stamps change times has
 * moved past this tick (a file changed after the agent goes on then always gets a later change time), `token`
 * names `next` and its tick slot (else nothing: the next snapshot is full). Then the agent processes go on, and a
 * small delta is printed (base64 after a {@link MARK} line naming `next`, which the agent cannot know; errors go to
 * a root-only file); the exit status is the script's.
 */
export function deltaScript(
  files: TaskFiles,
  workspace: string,
  user: string,
  prev: string,
  next: string,
  place: SnapshotPlace = WORKSPACE_PLACE,
): string {
  const s = place.state;
  const ws = shellQuote(workspace);
  const ro = readOnlyPaths(files);
  const prune = ro.length
    ? `\\( ${ro.map((p) => `-path ${shellQuote(`./${globQuote(p)}`)}`).join(" -o ")} \\) -prune -o`
    : "";
  const excludes = ro.map((p) => `--exclude=${shellQuote(`./${p}`)}`).join(" ");
  return [
    `${place.agentPids ?? `pids=$(pgrep -u ${shellQuote(user)})`}; [ -z "$pids" ] || kill -STOP $pids 2>/dev/null`,
    "(",
    `exec 2>${s}.err; export LC_ALL=C`,
    `[ -d ${ws} ] && [ ! -L ${ws} ] && cd -P -- ${ws} || exit 3`,
    `{ [ -d ${s} ] || mkdir -p -m 700 ${s}; } || exit 4`,
    `t=; slot=; read -r t slot < ${s}/token; [ "$slot" = 0 ] || slot=1; new=$((1 - slot))`,
    `: > ${s}/tick$new || exit 4`,
    `since=; [ -n ${shellQuote(prev)} ] && [ "$t" = ${shellQuote(prev)} ] && [ -f ${s}/tick$slot ] && since=--newer=${s}/tick$slot`,
    `find -P . -mindepth 1 ${prune} \\( -type f -o -type l \\) -printf '%y%i:%C@:%s\\t%P\\0' > ${s}/${LIST_MEMBER} || exit 5`,
    ...(place.owners
      ? [
          `find -P . ${prune} ! -user ${shellQuote(user)} -printf '%U:%G\\t%P\\0' > ${s}/${OWNERS_MEMBER} || exit 5`,
        ]
      : []),
    ...outsideCommands(user, s, place.outside),
    `tar -C . --anchored --no-wildcards ${excludes} $since -cf ${s}/delta.tar . -C ${s} ${LIST_MEMBER} ${OUTSIDE_MEMBER}${place.owners ? ` ${OWNERS_MEMBER}` : ""}; [ $? -le 1 ] || exit 7`,
    `i=0; : > ${s}/now; until [ ${s}/now -nt ${s}/tick$new ] || [ $i -ge ${TICK_WAIT_MS / 2} ]; do sleep 0.002; : > ${s}/now; i=$((i+1)); done`,
    `if [ ${s}/now -nt ${s}/tick$new ]; then printf '%s %s\\n' ${shellQuote(next)} $new > ${s}/token; else : > ${s}/token; fi`,
    ")",
    "status=$?",
    `[ -z "$pids" ] || kill -CONT $pids 2>/dev/null`,
    `if [ $status -ne 0 ]; then tail -c 500 ${s}.err; else d=$(stat -c %s ${s}/delta.tar);`,
    `  if [ "$d" -le ${INLINE_BYTES} ]; then printf '\\n${MARK} %s %s\\n' ${shellQuote(next)} "$d"; base64 -w0 ${s}/delta.tar; echo;`,
    `  else printf '\\n${MARK} %s archive\\n' ${shellQuote(next)}; fi; fi`,
    "(exit $status)",
  ].join("\n");
}

/** Where in a container its stored snapshots' state lives, what they carry outside the workspace, who is stopped. */
export interface SnapshotPlace {
  /** The root-only directory of the snapshot state (made when missing; never inside the workspace). */
  state: string;
  /** The agent's directories outside its workspace that a tree carries, in order (`SnapshotHandle.outside`). */
  outside: readonly string[];
  /** A shell line setting `pids` to the processes stopped while listing; default `pgrep -u <user>`. */
  agentPids?: string;
  /**
   * Record the owner (numeric uid:gid) of every workspace entry that is not the agent user's, stored as the tree's
   * `owners` file: a task image's files another user owned are theirs again after a restore (`restoreImageOwners`).
   */
  owners?: boolean;
}

/** A docker workspace sandbox's place: {@link SNAPSHOT_DIR}, /tmp and /var/tmp, the agent user's processes. */
export const WORKSPACE_PLACE: SnapshotPlace = { state: SNAPSHOT_DIR, outside: OUTSIDE_DIRS };

/** What a {@link DeltaSnapshots} needs of its container: its root shell and the engine's archive API. */
export interface SnapshotContainer {
  /** Where the state lives and what is carried; default {@link WORKSPACE_PLACE}. */
  place?: SnapshotPlace;
  /** Runs a root script; rejects on a non-zero exit. */
  rootRun(script: string): Promise<string>;
  /** The engine's tar of a path in the container (`getArchive`, never through a shell's capped output). */
  archive(path: string): Promise<Buffer>;
}

/** Where a snapshot's workspace is, whose it is, and the shell's directory. */
export interface SnapshotSource {
  files: TaskFiles;
  workspace: string;
  user: string;
  cwd: string;
  /**
   * The agent shell's exported variables (`readExports`), read while the files are stored: the shell is idle
   * between turns, and the script's stop of the agent's processes only delays its answer.
   */
  exports?: Promise<string | undefined>;
}

/**
 * Stored snapshots of one docker workspace sandbox as complete trees on this machine (format "tree", restorable by
 * any runtime on any host): the container sends only what changed since this sandbox's previous stored tree
 * (`deltaScript`), the rest is hard-linked from that tree (`storeDelta`). Without a previous tree (the first
 * snapshot, after {@link forget}, or when it was pruned meanwhile) the container sends everything. The tree holds
 * `workspace/` and, whole each time, the agent's files in each of its place's outside dirs in `outside/<i>/`.
 * @example const handle = await snapshots.save(store, "s0-r3-t4", { files, workspace, user: "agent", cwd });
 */
export class DeltaSnapshots {
  private last: (DeltaManifest & { token: string }) | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly container: SnapshotContainer) {}

  /** The sandbox's workspace was replaced (reset, restored, parked): the next snapshot is a full one. */
  forget(): void {
    this.last = undefined;
  }

  /** Saves one snapshot (one at a time per sandbox: two never share a previous tree). */
  save(store: SnapshotStore, id: string, source: SnapshotSource): Promise<SnapshotHandle> {
    const next = this.queue.then(() => this.saveNow(store, id, source));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async saveNow(store: SnapshotStore, id: string, source: SnapshotSource): Promise<SnapshotHandle> {
    // a pruned previous tree: nothing to link to, so the container sends everything at once
    const previous = this.last && existsSync(this.last.dir) ? this.last : undefined;
    this.last = undefined;
    try {
      return await this.attempt(store, id, source, previous);
    } catch (error) {
      if (!(error instanceof IncompleteDeltaError)) throw error;
      return this.attempt(store, id, source, undefined);
    }
  }

  private async attempt(
    store: SnapshotStore,
    id: string,
    source: SnapshotSource,
    previous: (DeltaManifest & { token: string }) | undefined,
  ): Promise<SnapshotHandle> {
    const token = randomUUID();
    const place = this.container.place ?? WORKSPACE_PLACE;
    const path = await store.place(id, "tree");
    await mkdir(path, { mode: 0o700 });
    const printed = await this.container.rootRun(
      deltaScript(source.files, source.workspace, source.user, previous?.token ?? "", token, place),
    );
    let delta = inline(printed, token);
    if (!delta) {
      delta = onlyFileOfTar(await this.container.archive(`${place.state}/delta.tar`));
      // the next snapshot overwrites it; nobody waits for this
      this.container.rootRun(`rm -f ${place.state}/delta.tar`).catch(() => undefined);
    }
    const entries = readTar(delta);
    const member = (name: string) => entries.find((e) => e.type === "file" && e.name === name);
    const list = member(LIST_MEMBER);
    if (!list) throw new Error("the container's snapshot delta lacks its file list");
    const workspace = join(path, "workspace");
    await mkdir(workspace, { mode: 0o700 });
    // every workspace member is `./…`; the others are the script's own
    const manifest = await storeDelta(
      list.data,
      entries.filter((e) => e.name.startsWith("./")),
      workspace,
      previous,
    );
    const outside = member(OUTSIDE_MEMBER);
    if (!outside) throw new Error(`the container's snapshot delta lacks ${OUTSIDE_MEMBER}`);
    await storeOutside(readTar(outside.data), path, place.outside);
    if (place.owners) {
      const owners = member(OWNERS_MEMBER);
      if (!owners) throw new Error(`the container's snapshot delta lacks ${OWNERS_MEMBER}`);
      await writeFile(join(path, OWNERS_MEMBER), owners.data, { mode: 0o600 });
    }
    const exports = await source.exports;
    const handle = await store.commit({
      id,
      format: "tree",
      path,
      cwd: source.cwd,
      ...(exports !== undefined && { exports }),
      outside: [...place.outside],
      transferredBytes: delta.length,
    });
    this.last = { ...manifest, token };
    return handle;
  }
}

/** The delta the script printed after its mark naming `token`, or undefined (too big: fetch it). */
function inline(printed: string, token: string): Uint8Array | undefined {
  const mark = `\n${MARK} ${token} `;
  const at = printed.lastIndexOf(mark);
  if (at < 0) throw new Error("the snapshot script printed no result");
  const [head = "", body = ""] = printed.slice(at + mark.length).split("\n");
  if (head === "archive") return undefined;
  const delta = Buffer.from(body, "base64");
  if (delta.length !== Number(head))
    throw new Error(`the snapshot script's output was cut: ${delta.length} of ${head} bytes`);
  return new Uint8Array(delta);
}
