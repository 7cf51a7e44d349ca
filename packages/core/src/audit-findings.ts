/** A critical finding of a task's latest audit: a probe made the evaluation report a score it did not earn. */
export interface CriticalFinding {
  /** The task's id (or the name the config gives it). */
  readonly task: string;
  readonly probe: string;
  readonly verdict: string;
  readonly evidence: string;
}

/**
 * What the latest `bun run audit` of this config found, as the run's plugins see it (`ctx.audit`): read once by
 * whoever runs the host (the launcher, from the run's store) and handed to every plugin, so no plugin opens
 * another plugin's files. Undefined in the context when the run was never audited (no store yet).
 * @example
 * const noise = ctx.audit?.noise.apartmentRent; // 0.004: the std of repeated baseline scores
 * const forged = ctx.audit?.critical.filter((f) => f.task === "blotto");
 */
export interface AuditFindings {
  /** Where they were read from, for messages (e.g. `outputs/quickstart/air.db`). */
  readonly source: string;
  /** Each task's evaluation noise (std of repeated baseline scores, `--repeats N`); {} when not measured. */
  readonly noise: Readonly<Record<string, number>>;
  /** The critical findings of each task's latest audit. */
  readonly critical: readonly CriticalFinding[];
  /** Why the findings could not be read (then `noise` and `critical` are empty); each plugin decides what it means. */
  readonly unreadable?: string;
}
