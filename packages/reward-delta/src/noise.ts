import { existsSync } from "node:fs";
import { join } from "node:path";
import { openStoreReadOnly, readEvaluationNoise } from "@air/logger-sqlite/read";

/**
 * Each task's evaluation noise for `min_improvement = "noise"`: the latest `bun run audit` of this config wrote it
 * to `<run dir>/air.db` (the audit and the run share the run dir). Throws when the store has none at all, so a
 * run never silently trains without the threshold it asked for.
 * @example const noise = readRunNoise("outputs/quickstart"); noise.apartmentRent // 0.004
 */
export function readRunNoise(runDir: string): Record<string, number> {
  const file = join(runDir, "air.db");
  const hint = `min_improvement = "noise" needs each task's evaluation noise: run \`bun run audit <config> --repeats 3\` first (it stores it in ${file})`;
  if (!existsSync(file)) throw new Error(`${hint}; there is no store yet`);
  const db = openStoreReadOnly(file);
  try {
    const noise = readEvaluationNoise(db);
    if (Object.keys(noise).length === 0)
      throw new Error(`${hint}; the store has no evaluation-noise finding`);
    return noise;
  } finally {
    db.$client.close();
  }
}
