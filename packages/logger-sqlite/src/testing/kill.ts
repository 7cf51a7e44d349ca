import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";

/** Path of the child script that runs a fixture run until it is killed. */
export const KILL_CHILD = join(import.meta.dir, "kill-child.ts");

/** Count of the first column of `sql`'s row in the store, 0 while it cannot be read. */
function countIn(dbPath: string, sql: string): number {
  if (!existsSync(dbPath)) return 0;
  try {
    const db = new Database(dbPath, { readonly: true });
    try {
      const row = db.query<{ n: number }, []>(sql).get();
      return row?.n ?? 0;
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

/** Turns stored of rollouts whose step has not ended: the kill then lands with a step half recorded. */
export const PARTIAL_STEP_TURNS =
  "SELECT count(*) AS n FROM turns JOIN trajectories t USING (run_id, rollout_id) " +
  "WHERE t.step > (SELECT max(step) FROM steps WHERE ended_at IS NOT NULL)";

/**
 * Starts a fixture run in a child process, waits until `minSteps` steps are stored, then kills it with
 * SIGKILL mid-run — with `partialTurns`, only once that many turns of the unfinished step are stored too.
 * Returns the database path. Throws (after killing the child) when it times out.
 * @example const dbPath = await runAndKill(dir, 2, 30_000);
 */
export async function runAndKill(
  dir: string,
  minSteps: number,
  timeoutMs: number,
  partialTurns = 0,
): Promise<string> {
  const dbPath = join(dir, "outputs", "killed", "air.db");
  const child = Bun.spawn(["bun", KILL_CHILD, dir], { stdout: "ignore", stderr: "pipe" });
  const deadline = Date.now() + timeoutMs;
  try {
    const finished = "SELECT count(*) AS n FROM steps WHERE ended_at IS NOT NULL";
    while (countIn(dbPath, finished) < minSteps || countIn(dbPath, PARTIAL_STEP_TURNS) < partialTurns) {
      if (child.exitCode !== null)
        throw new Error(`child exited early: ${await new Response(child.stderr).text()}`);
      if (Date.now() > deadline) throw new Error(`no ${minSteps} steps stored after ${timeoutMs} ms`);
      await Bun.sleep(20);
    }
    await Bun.sleep(15);
  } finally {
    child.kill("SIGKILL");
    await Promise.race([child.exited, Bun.sleep(5000)]);
  }
  if (child.signalCode !== "SIGKILL")
    throw new Error(`child was not killed by SIGKILL (${child.signalCode})`);
  return dbPath;
}
