import type Docker from "dockerode";
import { withTimeout } from "./docker-client.ts";
import { execOnce } from "./docker-exec.ts";
import { DeltaSnapshots, type SnapshotPlace } from "./docker-snapshot.ts";
import { CONTROL_TIMEOUT_MS, type ImagePlan, PRIVATE } from "./image-container.ts";
import type { SnapshotHandle } from "./snapshot-handle.ts";
import { OUTSIDE_DIRS, outsideRestore, stageOutside } from "./snapshot-outside.ts";
import type { SnapshotStore } from "./snapshot-store.ts";
import type { TaskFiles } from "./types.ts";

/**
 * The directories outside the WORKDIR that a task image's stored snapshot carries, in order: /tmp, /var/tmp and the
 * task's writable `environment.dirs` (e.g. /logs/agent), as the local runtime carries its /tmp and those dirs.
 */
export function imageOutsideDirs(plan: ImagePlan): string[] {
  return [...new Set([...OUTSIDE_DIRS, ...plan.dirs.map((d) => d.replace(/\/+$/, ""))])].filter(
    (d) =>
      d.startsWith("/") &&
      d.length > 1 &&
      !d
        .split("/")
        .slice(1)
        .some((p) => p === "" || p === "." || p === ".."),
  );
}

/**
 * What the incremental snapshot script needs beyond a POSIX sh (dash or busybox run it): GNU find's `-printf`, GNU
 * tar (`--newer`, `--verbatim-files-from`), `base64 -w0`, `stat -c`, a fractional `sleep`. An image without them
 * gets today's full WORKDIR tar (which already asks GNU tar's `--anchored`).
 */
const PROBE = [
  `mkdir -p ${PRIVATE} && chmod 700 ${PRIVATE} || exit 1`,
  "find / -maxdepth 0 -printf '' >/dev/null 2>&1 || exit 1",
  `case "$(tar --version 2>/dev/null)" in *"GNU tar"*) ;; *) exit 1;; esac`,
  "base64 -w0 </dev/null >/dev/null 2>&1 && stat -c %s / >/dev/null 2>&1 && sleep 0.001 || exit 1",
].join("\n");

/** The shell's output cap for a snapshot script: an inline delta (256 KiB base64) and some. */
const SCRIPT_OUTPUT_CHARS = 1_000_000;

/**
 * Stored snapshots of one task-image sandbox (`DeltaSnapshots`, as a docker workspace sandbox's): the WORKDIR as
 * `workspace/`, the agent's files in {@link imageOutsideDirs} as `outside/<i>/`, only what changed since this
 * sandbox's previous stored tree sent by the container. Every process but the container's init and keep-alive is
 * stopped while listing (the agent may be root here). `available()` says whether the image has the tools; else
 * the caller stores a full WORKDIR tar.
 */
export class ImageSnapshots {
  private readonly deltas: DeltaSnapshots;
  private probed: Promise<boolean> | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  readonly place: SnapshotPlace;

  constructor(
    private readonly container: Docker.Container,
    keep: string,
    private readonly plan: ImagePlan,
  ) {
    this.place = {
      state: `${PRIVATE}/snapshot`,
      outside: imageOutsideDirs(plan),
      agentPids: `pids=; for d in /proc/[0-9]*; do p=\${d#/proc/}; case " 1 ${keep} $$ " in *" $p "*) ;; *) pids="$pids $p";; esac; done`,
      owners: true,
    };
    this.deltas = new DeltaSnapshots({
      place: this.place,
      rootRun: (script) => this.rootRun(script, CONTROL_TIMEOUT_MS * 5),
      archive: (path) => this.archive(path),
    });
  }

  /** True when the image runs the incremental script (probed once); never for a WORKDIR of `/`. */
  available(): Promise<boolean> {
    this.probed ??=
      this.plan.workdir === "/"
        ? Promise.resolve(false)
        : this.rootRun(PROBE, CONTROL_TIMEOUT_MS).then(
            () => true,
            () => false,
          );
    return this.probed;
  }

  save(
    store: SnapshotStore,
    id: string,
    files: TaskFiles,
    cwd: string,
    exports?: Promise<string | undefined>,
  ): Promise<SnapshotHandle> {
    const { workdir: workspace, user } = this.plan;
    return this.deltas.save(store, id, { files, workspace, user, cwd, exports });
  }

  /**
   * Runs root scripts one at a time (each a new exec, unlike a workspace sandbox's one root shell): a delta's
   * unawaited removal never lands on the next snapshot's delta, nor is stopped by it.
   */
  private rootRun(script: string, timeoutMs: number): Promise<string> {
    const next = this.chain.then(() => this.rootRunNow(script, timeoutMs));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async rootRunNow(script: string, timeoutMs: number): Promise<string> {
    const r = await execOnce(this.container, ["sh", "-c", script], {
      user: "root",
      cwd: "/",
      timeoutMs,
      maxChars: SCRIPT_OUTPUT_CHARS,
    });
    if (r.timedOut) throw new Error(`snapshot script ran past ${timeoutMs} ms`);
    if (r.exitCode !== 0)
      throw new Error(`snapshot script failed (${r.exitCode}): ${(r.stderr + r.stdout).slice(-500)}`);
    return r.stdout;
  }

  private async archive(path: string): Promise<Buffer> {
    const stream = await withTimeout(this.container.getArchive({ path }), CONTROL_TIMEOUT_MS, "getArchive");
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    return Buffer.concat(chunks);
  }
}

/**
 * Lays a stored tree's outside directories into a task-image container (after its dirs were made): staged under
 * the root-only {@link PRIVATE}, owned by the agent, moved where the names are free (`outsideRestore`).
 */
export async function restoreImageOutside(
  container: Docker.Container,
  plan: ImagePlan,
  handle: SnapshotHandle,
  root: (script: string) => Promise<string>,
): Promise<void> {
  const stage = `${PRIVATE}/outside`;
  const outside = await outsideRestore(handle, plan.user, imageOutsideDirs(plan), stage);
  if (!outside) return;
  await root(`mkdir -p ${PRIVATE} && chmod 700 ${PRIVATE} && ${stageOutside(stage)}`);
  await withTimeout(
    container.putArchive(Buffer.from(outside.tar), { path: stage }),
    CONTROL_TIMEOUT_MS,
    "putArchive outside dirs",
  );
  await root(outside.script);
}
