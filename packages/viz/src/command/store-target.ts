import { existsSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importAirAgent, openStore, readAirAgentFiles } from "@air/logger-sqlite";

/**
 * Finds the store for a `bun run viz` argument: a run dir (its `air.db`), a database file, or air-agent
 * trajectory JSON (a file or a folder of them), which is imported into a fresh database under the temp dir.
 * The dashboard itself only reads; writing that database is this command's job.
 * @example resolveStore("outputs/quickstart") // → { dbPath: "outputs/quickstart/air.db", imported: false }
 */
export function resolveStore(target: string | undefined): { dbPath: string; imported: boolean } {
  if (target === undefined) {
    // Nothing to show but an eval comparison: an empty store keeps every page working.
    const dbPath = join(mkdtempSync(join(tmpdir(), "air-viz-")), "air.db");
    openStore(dbPath).$client.close();
    return { dbPath, imported: false };
  }
  if (!existsSync(target)) throw new Error(`no such file or directory: ${target}`);
  const isDir = statSync(target).isDirectory();
  if (isDir && existsSync(join(target, "air.db"))) return { dbPath: join(target, "air.db"), imported: false };
  if (!isDir && !target.endsWith(".json")) return { dbPath: target, imported: false };
  const { records, name } = readAirAgentFiles(target);
  if (records.length === 0) throw new Error(`${target} has no air.db and no air-agent *.json trajectories`);
  const dbPath = join(mkdtempSync(join(tmpdir(), "air-viz-")), "air.db");
  const db = openStore(dbPath);
  importAirAgent(db, records, name);
  db.$client.close();
  return { dbPath, imported: true };
}
