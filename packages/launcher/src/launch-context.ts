import type { LaunchContext } from "@air/core";
import type { RunConfig } from "./sections.ts";

/**
 * The context a plugin's launch hooks get: the TOML's dir, the run dir, the server the launcher starts, the model
 * (always named: `[model] name`).
 * @example launchContext(config).runDir // "/abs/outputs/quickstart"
 */
export function launchContext(
  config: RunConfig,
  inferenceUrl?: string,
): LaunchContext & { modelName: string } {
  return { configDir: config.dir, runDir: config.runDir, inferenceUrl, modelName: config.root.model.name };
}
