import { definePlugin, type EventHandlers, type LoggerPlugin } from "@air/core";
import { z } from "zod";
import { formatEvalLine, formatStepLine, lossOf } from "./step-line.ts";

export const consoleLoggerConfig = z
  .object({
    stream: z.enum(["stderr", "stdout"]).default("stderr").describe("where the step lines go"),
    show_warnings: z
      .boolean()
      .default(false)
      .describe("also print each step warning under the step line (the run's log already prints each once)"),
  })
  .strict();

/**
 * The console logger's hooks, writing through `write`: one line per step (`formatStepLine`: reward, rollouts
 * ok/failed, samples, turns, the causes of a flat reward, warning and error-log counts) and one line at the end
 * of the run.
 * @example const logger = consoleHooks((line) => process.stderr.write(line), { showWarnings: false });
 */
export function consoleHooks(
  write: (line: string) => void,
  options: { showWarnings: boolean; now?: () => number },
): LoggerPlugin {
  const now = options.now ?? Date.now;
  let errors = 0;
  let stepStart = now();
  let lastLoss: number | undefined;
  const hooks: Partial<EventHandlers> = {
    "step:start": () => {
      stepStart = now();
    },
    log: (e) => {
      if (e.level === "error") errors++;
    },
    "weights:updated": (e) => {
      lastLoss = lossOf(e.metrics) ?? lastLoss;
    },
    "step:end": (e) => {
      write(`${formatStepLine(e, { seconds: (now() - stepStart) / 1000, lastLoss, errorLogs: errors })}\n`);
      if (options.showWarnings) for (const w of e.warnings) write(`  warning: ${w}\n`);
      errors = 0;
    },
    "eval:end": (e) => {
      write(`${formatEvalLine(e)}\n`);
    },
    "run:end": (e) => {
      write(
        `run ${e.status}${e.error ? `: ${e.error}` : ""}${e.unsettled.length ? ` (never settled: ${e.unsettled.join("; ")})` : ""}\n`,
      );
    },
  };
  return { hooks };
}

/**
 * The "console" logger: one compact line per step on stderr. `rl` prints the step lines itself (its step-line
 * logger, on stdout, live on a terminal) and leaves this logger out of the run (`launch.printsStepLines`), so each
 * step shows once.
 * @example
 * [[logger]]
 * plugin = "console"
 */
export const consoleLogger = definePlugin({
  name: "console",
  kind: "logger",
  description:
    "one line per step: reward, rollouts ok/failed, turns, flat-reward causes, warning and error counts",
  configSchema: consoleLoggerConfig,
  launch: { printsStepLines: () => true },
  create(config) {
    const stream = config.stream === "stdout" ? process.stdout : process.stderr;
    return consoleHooks((line) => stream.write(line), { showWarnings: config.show_warnings });
  },
});
