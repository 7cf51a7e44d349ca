import type { PluginRegistry } from "@air/core";
import { formatReplay } from "./format.ts";
import { replayTrajectory } from "./replay.ts";
import { loadReplayTarget } from "./target.ts";

/**
 * A replay as the dashboard's Replay button runs it: a stored trajectory replayed `times` times with the
 * plugins of `registry` (the run's own env), answered with the printed report.
 * @example vizMain(argv, { replay: replayRunner(builtinRegistry()) })
 */
export function replayRunner(registry: PluginRegistry): (request: {
  runDir: string;
  rolloutId: string;
  times: number;
  signal: AbortSignal;
}) => Promise<{
  text: string;
}> {
  return async ({ runDir, rolloutId, times, signal }) => {
    const report = await replayTrajectory(loadReplayTarget(runDir, rolloutId), registry, { times, signal });
    return { text: formatReplay(report) };
  };
}
