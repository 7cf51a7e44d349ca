import { isAbsolute, resolve } from "node:path";
import type { ResolvedConfig } from "@air/core";
import { openStore, recordAudits } from "@air/logger-sqlite";
import type { z } from "zod";
import type { AuditReport } from "./types.ts";

/**
 * Writes the findings to the run store's `audits` table: the `sqlite` logger's file when the config has one,
 * else `<run dir>/air.db`. Returns the file.
 * @example const file = storeAudit(config, report);
 */
export function storeAudit<E extends Record<string, z.ZodType>>(
  config: ResolvedConfig<E>,
  report: AuditReport,
): string {
  const logger = config.plugins.loggers.find((l) => l.spec === "sqlite");
  const configured = logger?.config;
  const path =
    configured &&
    typeof configured === "object" &&
    "path" in configured &&
    typeof configured.path === "string"
      ? configured.path
      : "air.db";
  const file = isAbsolute(path) ? path : resolve(config.runDir, path);
  const db = openStore(file);
  try {
    recordAudits(
      db,
      report.findings.map((f) => ({ ...f, config: config.file, createdAt: Date.parse(report.createdAt) })),
    );
  } finally {
    db.$client.close();
  }
  return file;
}
