import type { ReplayRunner } from "../replay.ts";
import { serve } from "../serve.ts";
import { readComparison } from "./compare-files.ts";
import { resolveStore } from "./store-target.ts";

const USAGE = `usage: viz <run dir | air.db | air-agent trajectory .json or folder> [--port 8700] [--host 127.0.0.1]
       [--compare a.json,b.json [--names x,y]]   (eval report files: AUP and performance profiles at /eval-compare;
                                                  the run store is optional then)`;

/** What the entry point that runs `viz` passes in. */
export interface VizCommandOptions {
  /** Runs the trajectory page's Replay button (`@air/replay` with the entry point's plugin registry); none: 501. */
  replay?: ReplayRunner;
}

/**
 * The `bun run viz` command: parses arguments, serves the dashboard, and stops on SIGINT/SIGTERM.
 * Resolves with the exit code once the server stopped.
 * @example process.exitCode = await vizMain(process.argv.slice(2), { replay: replayRunner(builtinRegistry()) });
 */
export async function vizMain(argv: string[], options: VizCommandOptions = {}): Promise<number> {
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
    server = serve({ dbPath, port, host, comparison, replay: options.replay });
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
