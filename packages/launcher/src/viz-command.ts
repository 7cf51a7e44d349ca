import { existsSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importAirAgent, openStore, readAirAgentFiles } from "@air/logger-sqlite";
import { formatReplay, loadReplayTarget, replayTrajectory } from "@air/replay";
import { type ReplayRunner, serve } from "@air/viz";
import { builtinRegistry } from "./builtins.ts";
import { readComparison } from "./viz-compare.ts";

const USAGE = `usage: viz <run dir | air.db | air-agent trajectory .json or folder> [--port 8700] [--host 127.0.0.1]
       [--compare a.json,b.json [--names x,y]]   (eval report files: AUP and performance profiles at /eval-compare;
                                                  the run store is optional then)`;

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

/**
 * The trajectory page's Replay button: `@air/replay` with the built-in plugins (the run's own env).
 * @example serve({ dbPath, replay: replayRunner })
 */
export const replayRunner: ReplayRunner = async ({ runDir, rolloutId, times, signal }) => {
  const report = await replayTrajectory(loadReplayTarget(runDir, rolloutId), builtinRegistry(), {
    times,
    signal,
  });
  return { text: formatReplay(report) };
};

/**
 * The `bun run viz` command: parses arguments, serves the dashboard, and stops on SIGINT/SIGTERM.
 * Resolves with the exit code once the server stopped.
 * @example process.exitCode = await vizMain(process.argv.slice(2));
 */
export async function vizMain(argv: string[]): Promise<number> {
  let target: string | undefined;
  let port = 8700;
  let host = "127.0.0.1";
  let compare: string[] | undefined;
  let names: string[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (arg === "--port" || arg === "--host" || arg === "--compare" || arg === "--names") {
      const value = argv[++i];
      if (value === undefined) return fail(`${arg} needs a value`);
      if (arg === "--host") host = value;
      else if (arg === "--compare") compare = value.split(",").filter(Boolean);
      else if (arg === "--names") names = value.split(",");
      else if (!/^\d+$/.test(value) || Number(value) > 65535)
        return fail(`--port: not a port number: ${value}`);
      else port = Number(value);
    } else if (arg.startsWith("--")) return fail(`unknown flag ${arg}`);
    else if (target) return fail(`one run dir or database, got "${target}" and "${arg}"`);
    else target = arg;
  }
  if (!target && !compare) return fail("missing run dir or database");
  if (names && !compare) return fail("--names goes with --compare");
  let server: ReturnType<typeof serve>;
  try {
    const comparison = compare ? readComparison(compare, names) : undefined;
    const { dbPath, imported } = resolveStore(target);
    server = serve({ dbPath, port, host, comparison, replay: replayRunner });
    process.stderr.write(
      `${imported ? `imported air-agent trajectories into ${dbPath}\n` : ""}dashboard: ${server.url}${comparison ? `\neval comparison: ${server.url}eval-compare` : ""}\n`,
    );
  } catch (error) {
    return fail((error as Error).message);
  }
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.stop();
  return 0;
}

function fail(message: string): number {
  process.stderr.write(`viz: ${message}\n${USAGE}\n`);
  return 2;
}
