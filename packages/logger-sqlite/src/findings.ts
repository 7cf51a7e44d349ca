import { existsSync } from "node:fs";
import type { AuditFindings } from "@air/core";
import { readLatestAudits } from "./audits.ts";
import { readEvaluationNoise } from "./noise.ts";
import { openStore } from "./open.ts";

/**
 * The latest audit's findings in the store at `file` (`bun run audit` writes them), as plugins get them in
 * `ctx.audit`: each task's evaluation noise and the critical findings. Undefined when there is no store; a store
 * that cannot be read (not an air store yet) gives empty findings with `unreadable` saying why. Never throws.
 * @example readAuditFindings("outputs/quickstart/air.db")?.noise // { apartmentRent: 0.004 }
 */
export function readAuditFindings(file: string): AuditFindings | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const db = openStore(file, { readonly: true });
    try {
      const critical = readLatestAudits(db)
        .filter((row) => row.critical)
        .map(({ task, probe, verdict, evidence }) => ({ task, probe, verdict, evidence }));
      return { source: file, noise: readEvaluationNoise(db), critical };
    } finally {
      db.$client.close();
    }
  } catch (error) {
    return { source: file, noise: {}, critical: [], unreadable: String(error) };
  }
}
