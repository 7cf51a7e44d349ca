import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { AIR_DIR } from "./docker-layout.ts";
import { readTar } from "./docker-tar.ts";
import { readOnlyPaths } from "./shared.ts";
import { shellQuote } from "./shell.ts";
import { type DeltaManifest, IncompleteDeltaError, storeDelta } from "./snapshot-delta.ts";
import type { SnapshotHandle } from "./snapshot-handle.ts";
import type { SnapshotStore } from "./snapshot-store.ts";
import type { TaskFiles } from "./types.ts";

/** The container's root-only state of its stored snapshots: the last file list (`manifest`) and its `token`. */
export const SNAPSHOT_DIR = `${AIR_DIR}/snapshot`;

/**
 * How long (ms) the agent stays stopped at most after its files were listed, until the kernel's coarse clock (which
 * stamps change times) has moved on: a file changed later can then never keep a listed change time.
 */
const TICK_WAIT_MS = 2000;

/** A `find -path` pattern matching `path` literally. */
function globQuote(path: string): string {
  return path.replace(/[*?[\]\\]/g, "\\$&");
}

/**
 * The root script of one snapshot of `workspace`: agent processes stopped; the workspace (a real directory,
 * entered once, so every later step is relative to it) listed with `find -P` (never follows a link) without the
 * read-only paths, one `key\tpath` record per regular file, NUL-terminated (key: inode:ctime:size); the records
 * equal to those of the snapshot `prev` (when the container's `manifest` is that one) are the unchanged files, left
 * out of a tar of everything else (tar walks the tree itself and stores symlinks as links; a name with a newline
 * cannot be left out and is sent); list and delta in `SNAPSHOT_DIR/out`. Once a file touched now is newer than one
 * touched before the listing (the coarse clock ticked: within the same tick a file could change without its
 * change time moving), the list becomes the manifest of snapshot `next` (else none is: the next one is full). Then
 * the agent processes go on; the exit status is the script's.
 */
export function deltaScript(
  files: TaskFiles,
  workspace: string,
  user: string,
  prev: string,
  next: string,
): string {
  const s = SNAPSHOT_DIR;
  const ws = shellQuote(workspace);
  const ro = readOnlyPaths(files);
  const prune = ro.length
    ? `\\( ${ro.map((p) => `-path ${shellQuote(`./${globQuote(p)}`)}`).join(" -o ")} \\) -prune -o`
    : "";
  const excludes = ro.map((p) => `--exclude=${shellQuote(`./${p}`)}`).join(" ");
  const key = "%i:%C@:%s\\t%P\\0";
  return [
    `pkill -STOP -u ${shellQuote(user)}`,
    "(",
    "set -o pipefail; export LC_ALL=C",
    `[ -d ${ws} ] && [ ! -L ${ws} ] && cd -P -- ${ws} || exit 3`,
    `mkdir -p -m 700 ${s} && rm -rf ${s}/out && mkdir -m 700 ${s}/out || exit 4`,
    `touch ${s}/tick0`,
    `find -P . -mindepth 1 ${prune} -type f -printf '${key}' | sort -z > ${s}/out/list || exit 5`,
    `old=/dev/null; [ -n ${shellQuote(prev)} ] && [ "$(cat ${s}/token 2>/dev/null)" = ${shellQuote(prev)} ] && old=${s}/manifest`,
    `comm -z -12 "$old" ${s}/out/list | sed -z -e '/\\n/d' -e 's/^[^\\t]*\\t/.\\//' | tr '\\0' '\\n' > ${s}/exclude || exit 6`,
    `tar -C . --anchored --no-wildcards ${excludes} -X ${s}/exclude -cf ${s}/out/delta.tar .; [ $? -le 1 ] || exit 7`,
    `i=0; touch ${s}/tick1; until [ -n "$(find ${s}/tick1 -newer ${s}/tick0)" ] || [ $i -ge ${TICK_WAIT_MS / 2} ]; do sleep 0.002; touch ${s}/tick1; i=$((i+1)); done`,
    `if [ -n "$(find ${s}/tick1 -newer ${s}/tick0)" ]; then cp ${s}/out/list ${s}/manifest && printf %s ${shellQuote(next)} > ${s}/token; else rm -f ${s}/manifest ${s}/token; fi`,
    ")",
    "status=$?",
    `pkill -CONT -u ${shellQuote(user)}`,
    "(exit $status)",
  ].join("\n");
}

/** What a {@link DeltaSnapshots} needs of its container: its root shell and the engine's archive API. */
export interface SnapshotContainer {
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
}

/**
 * Stored snapshots of one docker workspace sandbox as complete trees on this machine (format "tree", restorable by
 * any runtime on any host): the container sends only what changed since this sandbox's previous stored tree
 * (`deltaScript`), the rest is hard-linked from that tree (`storeDelta`). Without a previous tree (the first
 * snapshot, after {@link forget}, or when it was pruned meanwhile) the container sends everything.
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
    const path = await store.place(id, "tree");
    await mkdir(path, { mode: 0o700 });
    await this.container.rootRun(
      deltaScript(source.files, source.workspace, source.user, previous?.token ?? "", token),
    );
    let sent: { list: Uint8Array; delta: Uint8Array };
    try {
      sent = fetched(await this.container.archive(`${SNAPSHOT_DIR}/out`));
    } finally {
      await this.container
        .rootRun(`rm -rf ${SNAPSHOT_DIR}/out ${SNAPSHOT_DIR}/exclude`)
        .catch(() => undefined);
    }
    const manifest = await storeDelta(sent.list, sent.delta, path, previous);
    const handle = await store.commit({
      id,
      format: "tree",
      path,
      cwd: source.cwd,
      transferredBytes: sent.list.length + sent.delta.length,
    });
    this.last = { ...manifest, token };
    return handle;
  }
}

/** The list and the delta tar out of the engine's archive of `SNAPSHOT_DIR/out`. */
function fetched(archive: Buffer): { list: Uint8Array; delta: Uint8Array } {
  const entries = readTar(archive);
  const file = (name: string) => entries.find((e) => e.type === "file" && e.name === `out/${name}`)?.data;
  const list = file("list");
  const delta = file("delta.tar");
  if (!list || !delta) throw new Error("the container's snapshot archive lacks its list or delta");
  return { list, delta };
}
