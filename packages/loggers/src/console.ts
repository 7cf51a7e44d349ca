import { definePlugin, type EventHandlers, type LoggerPlugin } from "@air/core";
import { z } from "zod";

export const consoleLoggerConfig = z
  .object({
    stream: z.enum(["stderr", "stdout"]).default("stderr").describe("where the step lines go"),
    show_warnings: z.boolean().default(true).describe("print each step warning on its own line"),
  })
  .strict();

const fmt = (x: number | undefined, digits = 3) => (x === undefined ? "-" : x.toFixed(digits));
const pct = (x: number | undefined) => (x === undefined ? "-" : `${Math.round(x * 100)}%`);

/**
 * The console logger's hooks, writing through `write`: one line per step (reward, turns, the causes of a flat
 * reward, warnings and errors counted since the previous step) and one line at the end of the run.
 * @example const logger = consoleHooks((line) => process.stderr.write(line), { showWarnings: true });
 */
export function consoleHooks(
  write: (line: string) => void,
  options: { showWarnings: boolean },
): LoggerPlugin {
  let errors = 0;
  let stepStart = Date.now();
  let trainer: Record<string, number> = {};
  const hooks: Partial<EventHandlers> = {
    "step:start": () => {
      stepStart = Date.now();
    },
    log: (e) => {
      if (e.level === "error") errors++;
    },
    "weights:updated": (e) => {
      trainer = e.metrics;
    },
    "step:end": (e) => {
      const m = e.metrics;
      const parts = [
        `step ${e.step}`,
        `reward ${fmt(m["reward/mean"])} [${fmt(m["reward/min"], 2)}, ${fmt(m["reward/max"], 2)}]`,
        `turns ${fmt(m["rollout/turns/mean"], 1)}`,
        `no-score ${pct(m["rollout/no_score_frac"])}`,
        `parse-err ${pct(m["rollout/parse_error_frac"])}`,
        `zero-var ${pct(m["group/zero_variance_frac"])}`,
        `failed ${m["rollout/failed"] ?? 0}`,
        `samples ${m["batch/samples"] ?? 0}`,
      ];
      if (trainer.loss !== undefined) parts.push(`loss ${fmt(trainer.loss, 4)}`);
      parts.push(
        `warnings ${e.warnings.length}`,
        `error logs ${errors}`,
        `${((Date.now() - stepStart) / 1000).toFixed(1)}s`,
      );
      write(`${parts.join(" | ")}\n`);
      if (options.showWarnings) for (const w of e.warnings) write(`  warning: ${w}\n`);
      errors = 0;
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
 * The "console" logger: one compact line per step on stderr.
 * @example
 * [[logger]]
 * plugin = "console"
 */
export const consoleLogger = definePlugin({
  name: "console",
  kind: "logger",
  description: "one line per step: reward, turns, flat-reward causes, warnings, errors",
  configSchema: consoleLoggerConfig,
  create(config) {
    const stream = config.stream === "stdout" ? process.stdout : process.stderr;
    return consoleHooks((line) => stream.write(line), { showWarnings: config.show_warnings });
  },
});
