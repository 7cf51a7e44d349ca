import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** `<run_dir>/air-steps.json`: which prime-rl step each air step's batch took (null: an empty step, not sent). */
export const STEP_MAP_FILE = "air-steps.json";

/**
 * Reads the persisted air → prime-rl step map of a run dir (empty when there is none).
 * @example readStepMap("/out/run_default") // { "0": 1, "1": null, "2": 2 }
 */
export function readStepMap(runDir: string): Record<string, number | null> {
  const file = join(runDir, STEP_MAP_FILE);
  if (!existsSync(file)) return {};
  const raw: unknown = JSON.parse(readFileSync(file, "utf8"));
  if (typeof raw !== "object" || raw === null) return {};
  const out: Record<string, number | null> = {};
  for (const [k, v] of Object.entries(raw)) if (v === null || typeof v === "number") out[k] = v;
  return out;
}

/** Writes the map atomically (write + rename). */
export function writeStepMap(runDir: string, map: Record<string, number | null>): void {
  const file = join(runDir, STEP_MAP_FILE);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify(map)}\n`);
  renameSync(`${file}.tmp`, file);
}

/**
 * The prime-rl step whose broadcast holds the weights after air step `airStep`: from the persisted map, else
 * `airStep + offset` (a run dir from before the map existed). Null when that air step sent no batch: then the
 * weights are those of the last earlier step that did (see `lastPrimeStepUpTo`).
 * @example primeStepOf("/out/run_default", 3) // 4
 */
export function primeStepOf(runDir: string, airStep: number, offset = 1): number | null {
  const map = readStepMap(runDir);
  const key = String(airStep);
  return key in map ? (map[key] ?? null) : airStep + offset;
}

/**
 * The last prime-rl step taken by an air step ≤ `airStep` (0 when none: the trainer's startup weights).
 * @example lastPrimeStepUpTo("/out/run_default", 5) // 4 when air steps 4 and 5 were empty
 */
export function lastPrimeStepUpTo(runDir: string, airStep: number, offset = 1): number {
  const map = readStepMap(runDir);
  if (Object.keys(map).length === 0) return airStep < 0 ? 0 : airStep + offset;
  let best = 0;
  for (const [k, v] of Object.entries(map)) if (Number(k) <= airStep && v !== null && v > best) best = v;
  return best;
}
