import type { ResolvedConfig } from "@air/core";
import { openStore, recordAudits, runStoreFile } from "@air/logger-sqlite";
import type { z } from "zod";
import type { AuditReport } from "./types.ts";

/**
 * Writes the findings to the run store's `audits` table: the `sqlite` logger's file when the config has one,
 * else `<run dir>/air.db` (`runStoreFile`, where the launcher reads them). Returns the file.
 * @example const file = storeAudit(config, report);
 */
export function storeAudit<E extends Record<string, z.ZodType>>(
  config: ResolvedConfig<E>,
  report: AuditReport,
): string {
  const file = runStoreFile(config);
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
