import { isAbsolute, resolve } from "node:path";
import type { ResolvedConfig } from "@air/core";
import { sqliteLoggerConfig } from "./options.ts";

/**
 * The file a `sqlite` logger's `path` names: as is when absolute, else under the run dir.
 * @example storeFileIn("outputs/quickstart", "air.db") // "<cwd>/outputs/quickstart/air.db"
 */
export function storeFileIn(runDir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(runDir, path);
}

/**
 * The run store of a config: the file its first `sqlite` logger writes (`[[logger]] path`), else
 * `<run dir>/air.db`. What the logger records into, `bun run audit` stores its findings in and the launcher reads
 * them from.
 * @example runStoreFile(config) // "/abs/outputs/quickstart/runs.db" with [[logger]] plugin = "sqlite", path = "runs.db"
 */
export function runStoreFile(config: Pick<ResolvedConfig, "runDir" | "plugins">): string {
  const logger = config.plugins.loggers.find((l) => l.definition.name === "sqlite");
  const parsed = logger ? sqliteLoggerConfig.safeParse(logger.config) : undefined;
  return storeFileIn(config.runDir, parsed?.success ? parsed.data.path : "air.db");
}
