import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  listRuns,
  listTrajectories,
  openStoreReadOnly,
  parseJson,
  readTrajectory,
  type StoreDb,
  type StoredTrajectory,
  type StoredTurn,
} from "@air/logger-sqlite/read";

/** Bad input to `replay` (no such run dir, trajectory, or a run dir without what a replay needs): exit 2. */
export class ReplayInputError extends Error {}

/** What `rl` saved in `<run dir>/config.resolved.json` that a replay uses. */
export interface SavedRunConfig {
  /** The TOML file the run was started from (relative paths in the env config are relative to its folder). */
  file: string;
  root: Record<string, unknown> & { run: { name: string }; orchestrator: { max_turns: number } };
  plugins: {
    env: { plugin: string; config: unknown };
    loggers?: Array<{ plugin: string; config?: { path?: string } }>;
  };
}

/** One stored turn as a replay needs it: the command the policy sent and what came back. */
export interface ReplayStep {
  /** The command replayed (the stored command; for a turn with a parse error its completion text). */
  command: string;
  /** The stored reply: a turn with a parse error is replayed as this reply with the same parse error. */
  completion: string;
  observation: string;
  scores: Record<string, number> | null;
  parseError: string | null;
}

/** A stored trajectory, ready to replay. */
export interface ReplayTarget {
  runDir: string;
  dbPath: string;
  runId: number;
  rolloutId: string;
  saved: SavedRunConfig;
  trajectory: StoredTrajectory;
  /** The turns from the root of its tree (a tree node's ancestors' turns up to its fork), then its own. */
  steps: ReplayStep[];
}

const CONFIG_FILE = "config.resolved.json";

/** The store file of a run: its `sqlite` logger's `path` (relative to the run dir), else `air.db`. */
function storePath(runDir: string, saved: SavedRunConfig): string {
  const sqlite = saved.plugins.loggers?.find((l) => l.plugin === "sqlite");
  return resolve(runDir, sqlite?.config?.path ?? "air.db");
}

function step(t: StoredTurn): ReplayStep {
  return {
    command: t.command ?? t.completion,
    completion: t.completion,
    observation: t.observation,
    scores: t.scores,
    parseError: t.parseError,
  };
}

/** The turns a tree node's path replays: each ancestor's turns before the fork, then the node's own. */
function pathSteps(db: StoreDb, runId: number, trajectory: StoredTrajectory): ReplayStep[] {
  const chain: StoredTrajectory[] = [trajectory];
  for (let node = trajectory; chain.length < 100; ) {
    const parent = parseJson<{ trajectoryId?: string } | null>(node.trajectory.parentJson, null);
    const above = parent?.trajectoryId ? readTrajectory(db, runId, parent.trajectoryId) : null;
    if (!above) break;
    chain.unshift(above);
    node = above;
  }
  const first = (t: StoredTrajectory) =>
    parseJson<{ turnIndex?: number } | null>(t.trajectory.parentJson, null)?.turnIndex ?? 0;
  return chain.flatMap((node, i) => {
    const next = chain[i + 1];
    const own = node.turns.map(step);
    return next ? own.slice(0, Math.max(0, first(next) - first(node))) : own;
  });
}

/**
 * Finds a stored trajectory of a run dir: reads `<run dir>/config.resolved.json` (the config `rl` resolved) and
 * the trajectory's turns from the run's store (read API only). Throws `ReplayInputError` naming what is missing.
 * @example const target = loadReplayTarget("outputs/quickstart", "s0-r3");
 */
export function loadReplayTarget(runDir: string, rolloutId: string): ReplayTarget {
  const dir = resolve(runDir);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new ReplayInputError(`no such run dir: ${runDir}`);
  const configFile = join(dir, CONFIG_FILE);
  if (!existsSync(configFile))
    throw new ReplayInputError(`${runDir} is not a run dir of \`bun run rl\` (no ${CONFIG_FILE})`);
  const saved = parseJson<SavedRunConfig | null>(readFileSync(configFile, "utf8"), null);
  if (!saved?.plugins?.env?.plugin || !saved.root?.run || !saved.file)
    throw new ReplayInputError(`${configFile} has no env plugin, run section or config file; is it from rl?`);
  const dbPath = storePath(dir, saved);
  if (!existsSync(dbPath)) throw new ReplayInputError(`${runDir} has no run store (${dbPath})`);
  const db = openStoreReadOnly(dbPath);
  try {
    const runs = listRuns(db);
    const run = runs.filter((r) => r.runDir && resolve(r.runDir) === dir).at(-1) ?? runs.at(-1);
    if (!run) throw new ReplayInputError(`${dbPath} holds no run`);
    const trajectory = readTrajectory(db, run.id, rolloutId);
    if (!trajectory) {
      const some = listTrajectories(db, run.id, { page: 1, per: 5, sort: "step" }).rows.map(
        (r) => r.rolloutId,
      );
      throw new ReplayInputError(
        `no trajectory "${rolloutId}" in run ${run.id} of ${dbPath}${some.length ? ` (some ids: ${some.join(", ")})` : " (it has none)"}`,
      );
    }
    if (trajectory.turns.length === 0)
      throw new ReplayInputError(`trajectory "${rolloutId}" has no stored turns: nothing to replay`);
    return {
      runDir: dir,
      dbPath,
      runId: run.id,
      rolloutId,
      saved,
      trajectory,
      steps: pathSteps(db, run.id, trajectory),
    };
  } finally {
    db.$client.close();
  }
}
