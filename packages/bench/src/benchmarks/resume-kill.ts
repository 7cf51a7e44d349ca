import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { trackChild } from "../proc.ts";

const REPO = resolve(import.meta.dir, "../../../..");
/** The multi-turn runs killed: the quickstart (mlgym, bubblewrap) and a Harbor task (hello-file, bubblewrap). */
export const KILL_CONFIGS = {
  quickstart: "configs/quickstart.toml",
  harbor: "configs/harbor/learn.toml",
} as const;
export type KillTask = keyof typeof KILL_CONFIGS;
const RUN = "bench-resume";
const BOUND_MS = 10 * 60_000;

/** What one kill -9 and `--resume` cost: the rollouts at risk and the environment steps run again. */
export interface KillOutcome {
  task: KillTask;
  arm: "today" | "now";
  /** Rollouts of untrained steps with at least one recorded turn when the kill came. */
  inFlight: number;
  /** Their recorded turns (environment steps done). */
  recordedTurns: number;
  /** Recorded turns executed again after the resume (their rollout started over). */
  redone: number;
  /** Milliseconds after step 0 ended that the kill came. */
  atMs: number;
  /** What the resumed run said of rollouts it could not continue (its "starts over" / saveState warnings). */
  why: string[];
}

function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}

const lastCompleted = (runDir: string) =>
  readJson<{ lastCompletedStep?: number }>(join(runDir, "progress.json"))?.lastCompletedStep ?? -1;

/** Recorded turns per rollout of steps after `after` (train split). */
function atRisk(dbPath: string, after: number): Map<string, number> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = db
      .query<{ id: string; n: number }, [number]>(
        `SELECT t.rollout_id AS id, (SELECT count(*) FROM turns u WHERE u.run_id = t.run_id AND u.rollout_id = t.rollout_id) AS n
         FROM trajectories t WHERE t.step > ?1 AND t.split = 'train'`,
      )
      .all(after);
    return new Map(rows.filter((r) => r.n > 0).map((r) => [r.id, r.n]));
  } finally {
    db.close();
  }
}

/** `resume/turn` of each stored trajectory that has one (continued by `--resume`). */
function resumedAt(dbPath: string): Map<string, number> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const out = new Map<string, number>();
    for (const r of db
      .query<{ id: string; m: string | null }, []>(
        "SELECT rollout_id AS id, metrics_json AS m FROM trajectories",
      )
      .all()) {
      const at = (JSON.parse(r.m ?? "{}") as Record<string, number>)["resume/turn"];
      if (typeof at === "number") out.set(r.id, at);
    }
    return out;
  } finally {
    db.close();
  }
}

/** Both runs' log lines about rollouts that could not continue (a failed saveState, a restore that failed). */
function warnings(dbPath: string): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db
      .query<{ m: string }, []>(
        "SELECT message AS m FROM logs WHERE message LIKE '%starts over%' OR message LIKE '%saveState%' ORDER BY id",
      )
      .all()
      .map((r) => r.m);
  } finally {
    db.close();
  }
}

function launch(args: string[]) {
  return trackChild(
    Bun.spawn(["bun", "packages/launcher/src/bin/rl.ts", ...args], {
      cwd: REPO,
      stdout: "ignore",
      stderr: "pipe",
      stdin: "ignore",
    }),
  );
}

/**
 * One crash of a 4-turn run of `task` (`KILL_CONFIGS`): run until step 0 is trained, wait `delayMs` more, kill -9 the launcher and
 * every process group it started (tiny inference, tiny trainer), read what the store holds of the untrained steps,
 * `--resume` to the end and count the recorded turns that ran again. `arm` "today": `resume_rollouts = false`.
 * @example const outcome = await killAndResume("quickstart", "now", 3000, 3);
 */
export async function killAndResume(
  task: KillTask,
  arm: "today" | "now",
  delayMs: number,
  maxSteps: number,
): Promise<KillOutcome> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-resume-"));
  const runDir = join(out, RUN);
  const dbPath = join(runDir, "air.db");
  const port = freePort();
  const args = [
    KILL_CONFIGS[task],
    "--run.output_dir",
    out,
    "--run.name",
    RUN,
    `--run.max_steps=${maxSteps}`,
    "--orchestrator.max_turns=4",
    `--orchestrator.resume_rollouts=${arm === "now"}`,
    `--inference.port=${port}`,
    `--policy.base_url="http://127.0.0.1:${port}/v1"`,
  ];
  try {
    const first = launch(args);
    const deadline = Date.now() + BOUND_MS;
    while (lastCompleted(runDir) < 0) {
      if (first.exitCode !== null || Date.now() > deadline) {
        first.kill("SIGKILL");
        throw new Error(`step 0 never finished: ${(await new Response(first.stderr).text()).slice(-600)}`);
      }
      await Bun.sleep(25);
    }
    await Bun.sleep(delayMs);
    const groups =
      readJson<{ children?: Array<{ pgid: number }> }>(join(runDir, "run.pid.json"))?.children ?? [];
    first.kill("SIGKILL");
    for (const g of groups)
      try {
        process.kill(-g.pgid, "SIGKILL");
      } catch {}
    await first.exited;
    const trained = lastCompleted(runDir);
    if (trained >= maxSteps - 1) throw new Error("the run finished before the kill");
    const risk = existsSync(dbPath) ? atRisk(dbPath, trained) : new Map<string, number>();
    const second = launch([...args, "--resume"]);
    const timer = setTimeout(() => second.kill("SIGKILL"), BOUND_MS);
    const [stderr, code] = await Promise.all([new Response(second.stderr).text(), second.exited]);
    clearTimeout(timer);
    if (code !== 0) throw new Error(`--resume exited ${code}: ${stderr.slice(-600)}`);
    const kept = resumedAt(dbPath);
    let redone = 0;
    for (const [id, turns] of risk) redone += kept.get(id) === turns ? 0 : turns;
    return {
      task,
      arm,
      inFlight: risk.size,
      recordedTurns: [...risk.values()].reduce((a, b) => a + b, 0),
      redone,
      atMs: delayMs,
      why: redone > 0 ? warnings(dbPath) : [],
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
