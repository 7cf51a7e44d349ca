import { existsSync } from "node:fs";
import { join } from "node:path";
import { openStoreReadOnly, readEvaluationNoise } from "@air/logger-sqlite/read";

/**
 * Each task's evaluation noise (std of repeated baseline scores) from the latest `bun run audit` of this config,
 * read from `<run dir>/air.db`; {} when there is no store or no audit yet (then the `score-jump` tamper flag
 * uses the declared score ranges alone).
 * @example recordedNoise("outputs/quickstart") // { apartmentRent: 0 }
 */
export function recordedNoise(runDir: string): Record<string, number> {
  const file = join(runDir, "air.db");
  if (!existsSync(file)) return {};
  const db = openStoreReadOnly(file);
  try {
    return readEvaluationNoise(db);
  } finally {
    db.$client.close();
  }
}
