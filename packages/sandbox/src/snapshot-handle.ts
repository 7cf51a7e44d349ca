/**
 * A stored snapshot of a sandbox (`Runtime.saveSnapshot`): plain JSON, kept in a run store and restored by
 * another process with `Runtime.acquire(files, { restore })`; listed and pruned through its `SnapshotStore`.
 */
export interface SnapshotHandle {
  /** Unique within its store: letters, digits, '.', '_', '-'. */
  id: string;
  /**
   * "tree": a directory of the workspace's files (local and docker workspace sandboxes; restorable by either);
   * "tar": a workspace tar (tasks with their own image, and snapshots stored before docker stored trees).
   */
  format: "tree" | "tar";
  /** Absolute path of the stored workspace on this machine. */
  path: string;
  /** The agent shell's working directory when it was taken. */
  cwd: string;
  /**
   * The agent shell's exported variables when it was taken, as bash's `export -p` printed them (`readExports`); a
   * restore exports them again and unsets those it did not have. Absent: none carried (older snapshots).
   */
  exports?: string;
  /**
   * Trees only: directories outside the workspace stored too, as the agent sees them (local: its `/tmp`, the task's
   * writable `environment.dirs`; docker: `/tmp`, `/var/tmp`); `path` then holds `workspace/` and `outside/<i>/` for
   * the i-th. Absent: `path` is the workspace itself (tars, and trees stored before these were carried).
   */
  outside?: string[];
  /** Bytes of the stored files. */
  bytes: number;
  createdAtMs: number;
  /**
   * Bytes this snapshot moved out of the sandbox (docker: the changed files' tar and the file list); the rest of the
   * tree are hard links to the sandbox's previous snapshot. Absent where the runtime does not count it.
   */
  transferredBytes?: number;
}
