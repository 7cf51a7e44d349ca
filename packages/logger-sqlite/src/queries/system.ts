import { desc, eq } from "drizzle-orm";
import type { StoreDb } from "../open.ts";
import { logs, processes, sandboxes } from "../schema.ts";

/**
 * What the dashboard's system page shows: the run's processes, its 200 most recently updated sandboxes and
 * its 50 newest log lines.
 * @example const { processes, sandboxes, logs } = systemState(db, 1);
 */
export function systemState(db: StoreDb, runId: number) {
  return {
    processes: db.select().from(processes).where(eq(processes.runId, runId)).all(),
    sandboxes: db
      .select()
      .from(sandboxes)
      .where(eq(sandboxes.runId, runId))
      .orderBy(desc(sandboxes.updatedAt))
      .limit(200)
      .all(),
    logs: db.select().from(logs).where(eq(logs.runId, runId)).orderBy(desc(logs.id)).limit(50).all(),
  };
}
