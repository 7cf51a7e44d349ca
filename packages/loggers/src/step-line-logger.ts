import { definePlugin } from "@air/core";
import { z } from "zod";
import { createProgressView } from "./progress.ts";

export const stepLineLoggerConfig = z
  .object({
    stream: z.enum(["stdout", "stderr"]).default("stdout").describe("where the step lines go"),
    live: z
      .boolean()
      .default(false)
      .describe(
        "on a terminal: one live line per step (bar, rollouts done and failed, in-flight, turns/s, last reward), replaced by the step line",
      ),
    total_steps: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("shown as (done/total); `rl` sets [run] max_steps"),
    rollouts_per_step: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("the live bar's length; `rl` sets [orchestrator] batch_size"),
  })
  .strict();

/**
 * The "step-line" logger: the run's progress view on the run's bus (progress.ts): one step line per step
 * (`formatStepLine`), live on a terminal. `rl` runs one of its own on stdout (`launch.stepLines`) and leaves out the
 * loggers that print step lines themselves (`launch.printsStepLines`: the console logger), so a step shows once.
 * @example
 * [[logger]]
 * plugin = "step-line"
 * stream = "stdout"
 */
export const stepLineLogger = definePlugin({
  name: "step-line",
  kind: "logger",
  description: "the step lines of `rl`'s terminal: one line per step, a live bar on a terminal",
  configSchema: stepLineLoggerConfig,
  launch: { printsStepLines: () => true, stepLines: (options) => createProgressView(options) },
  create(config) {
    const stream = config.stream === "stdout" ? process.stdout : process.stderr;
    const view = createProgressView({
      totalSteps: config.total_steps,
      rolloutsPerStep: config.rollouts_per_step,
      write: (t) => stream.write(t),
      tty: config.live,
    });
    return { hooks: view.hooks, close: () => view.finish() };
  },
});
