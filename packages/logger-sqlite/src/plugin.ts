import { definePlugin, errorMessage } from "@air/core";
import { openStore } from "./open.ts";
import { sqliteLoggerConfig } from "./options.ts";
import { RunRecorder } from "./recorder.ts";
import { storeFileIn } from "./store-file.ts";

/**
 * The "sqlite" logger: records every run event into `<runDir>/air.db` (drizzle schema, WAL, batched writes).
 * @example
 * [[logger]]
 * plugin = "sqlite"
 * flush_ms = 500
 */
export default definePlugin({
  name: "sqlite",
  kind: "logger",
  description: "run store: steps, trajectories, turns, metrics in SQLite (read by `bun run viz`)",
  configSchema: sqliteLoggerConfig,
  create(config, ctx) {
    const file = storeFileIn(ctx.runDir, config.path);
    let db: ReturnType<typeof openStore>;
    try {
      db = openStore(file, { synchronous: config.synchronous });
    } catch (error) {
      throw new Error(`cannot open the run store ${file}: ${errorMessage(error)}`);
    }
    const recorder = new RunRecorder(
      db,
      {
        flushRows: config.flush_rows,
        flushMs: config.flush_ms,
        heartbeatMs: config.heartbeat_ms,
        onError: (error) => ctx.log.error(`write to ${file} failed: ${errorMessage(error)}`),
      },
      { name: ctx.runName, runDir: ctx.runDir, resume: ctx.resume },
    );
    const resumed = recorder.continued;
    if (resumed)
      ctx.log.info(
        `continuing run ${resumed.runId} in ${file}: dropped ${resumed.droppedTrajectories} trajectories of ${resumed.droppedSteps} interrupted step(s), kept ${resumed.kept.length} to continue from their last turn`,
      );
    else ctx.log.debug(`recording run ${recorder.runId} into ${file}`);
    return {
      hooks: recorder.hooks,
      close: () => recorder.close(),
      recordedRollouts: () => [...recorder.recorded.values()],
      evalRecorded: (step) => recorder.evalRecorded(step),
    };
  },
});
