/** Sandbox uids per process when air runs as root: each sandbox and each running evaluation takes one. */
const UID_BLOCK = 4096;

/** First uid of this process's block (blocks by process id, so concurrent runs rarely share one). */
function uidBlock(): number {
  return 200_000 + (process.pid % 64) * UID_BLOCK;
}

/** The uid of the start-up probe (never handed to a sandbox). */
export function probeUid(): number {
  return uidBlock() + UID_BLOCK - 1;
}

/**
 * The host uids of one process's local sandboxes and evaluations: as root, an unprivileged uid of this process's
 * block each, never two live at once; without root, air's own uid for all.
 * @example const uids = new UidPool(true); const uid = uids.take(); ...; uids.free(uid);
 */
export class UidPool {
  private readonly used = new Set<number>();
  private counter = 0;

  constructor(private readonly asRoot: boolean) {}

  take(): number {
    if (!this.asRoot) return process.getuid?.() ?? 0;
    const base = uidBlock();
    for (let i = 0; i < UID_BLOCK - 1; i++) {
      const uid = base + ((this.counter++ + i) % (UID_BLOCK - 1));
      if (!this.used.has(uid)) {
        this.used.add(uid);
        return uid;
      }
    }
    throw new Error(`more than ${UID_BLOCK - 1} live local sandboxes in one process`);
  }

  free(uid: number): void {
    this.used.delete(uid);
  }
}
