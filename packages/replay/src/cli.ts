import { errorMessage, type PluginRegistry } from "@air/core";
import { formatReplay } from "./format.ts";
import { replayTrajectory } from "./replay.ts";
import { loadReplayTarget, ReplayInputError } from "./target.ts";

export const REPLAY_USAGE = `usage: replay <run dir> <trajectory id> [--times N] [--concurrency N]
  replays a stored trajectory's commands N times (default 3) in fresh sandboxes of the run's own env with the
  scripted policy; prints the score distribution and where observations diverge from the stored ones`;

function fail(message: string): number {
  process.stderr.write(`replay: ${message}\n${REPLAY_USAGE}\n`);
  return 2;
}

/**
 * The `bun run replay` command. Exit 0 when every replay ran (whatever the scores), 1 when one failed or the
 * env could not start, 2 on bad input (arguments, run dir, trajectory id), 130 when interrupted.
 * @example process.exitCode = await replayMain(process.argv.slice(2), builtinRegistry());
 */
export async function replayMain(argv: string[], registry: PluginRegistry): Promise<number> {
  const positional: string[] = [];
  let times = 3;
  let concurrency: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") {
      process.stdout.write(`${REPLAY_USAGE}\n`);
      return 0;
    }
    if (arg === "--times" || arg === "--concurrency") {
      const value = argv[++i];
      if (value === undefined || !/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1000)
        return fail(`${arg} needs a whole number from 1 to 1000, got ${value ?? "nothing"}`);
      if (arg === "--times") times = Number(value);
      else concurrency = Number(value);
    } else if (arg.startsWith("--")) return fail(`unknown flag ${arg}`);
    else positional.push(arg);
  }
  if (positional.length !== 2)
    return fail(`needs a run dir and a trajectory id, got ${positional.length} argument(s)`);
  let target: ReturnType<typeof loadReplayTarget>;
  try {
    target = loadReplayTarget(positional[0]!, positional[1]!);
  } catch (error) {
    if (error instanceof ReplayInputError) return fail(error.message);
    process.stderr.write(`replay: ${errorMessage(error)}\n`);
    return 1;
  }
  const stop = new AbortController();
  const abort = () => stop.abort();
  process.once("SIGINT", abort);
  process.once("SIGTERM", abort);
  try {
    const report = await replayTrajectory(target, registry, { times, concurrency, signal: stop.signal });
    process.stdout.write(formatReplay(report));
    if (stop.signal.aborted) return 130;
    return report.runs.some((r) => r.error) ? 1 : 0;
  } catch (error) {
    process.stderr.write(`replay: ${errorMessage(error)}\n`);
    return stop.signal.aborted ? 130 : 1;
  } finally {
    process.off("SIGINT", abort);
    process.off("SIGTERM", abort);
  }
}
