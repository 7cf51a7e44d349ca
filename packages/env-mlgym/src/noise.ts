import { existsSync } from "node:fs";
import { join } from "node:path";
import { openStoreReadOnly, readEvaluationNoise } from "@air/logger-sqlite/read";

/**
 * Each task's evaluation noise (std of repeated baseline scores) from the latest `bun run audit` of this config,
 * read from `<run dir>/air.db`; {} when there is no store or no audit yet (then the `score-jump` tamper flag
 * uses the declared score ranges alone), and {} after a `warn` when the store cannot be read (not an air store
 * yet: the run's logger may be creating it).
 * @example recordedNoise("outputs/quickstart", (m) => log.warn(m)) // { apartmentRent: 0 }
 */
export function recordedNoise(runDir: string, warn: (message: string) => void): Record<string, number> {
  const file = join(runDir, "air.db");
  if (!existsSync(file)) return {};
  try {
    const db = openStoreReadOnly(file);
    try {
      return readEvaluationNoise(db);
    } finally {
      db.$client.close();
    }
  } catch (error) {
    warn(
      `mlgym: no evaluation noise from ${file} (${String(error)}); score-jump uses the score ranges alone`,
    );
    return {};
  }
}
