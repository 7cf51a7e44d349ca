import { Database } from "bun:sqlite";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { trackChild } from "../proc.ts";
import { CONFIG, freePort, REPO, RL, trainedSteps } from "./faults-util.ts";

/** A quickstart `rl` run started by the fault bench. */
export interface RlRun {
  child: Subprocess;
  runDir: string;
  /** The launcher's stdout and stderr, each line stamped with seconds since the start. */
  log: string;
  /** Resolves with the exit code (-1 when killed by the timeout). */
  exited: Promise<number>;
  /** Appends a line (e.g. ">>> SIGINT to the launcher") to the log at this moment. */
  mark(text: string): void;
  /** The log's text. */
  text(): string;
}

/**
 * Starts `bun rl.ts configs/quickstart.toml` (or `bun run rl …` with `wrapper`) into `<out>/<name>` on a free inference
 * port, with `extra` overrides; SIGKILLs it after `timeoutMs`. Its output goes to `<logDir or out>/<name>-rl-<ms>.log`,
 * each line stamped.
 * @example const run = await startRl(out, "q", ["--run.max_steps", "4"]); await run.exited;
 */
export async function startRl(
  out: string,
  name: string,
  extra: string[],
  options: { wrapper?: boolean; timeoutMs?: number; port?: number; baseUrl?: string; logDir?: string } = {},
): Promise<RlRun> {
  const port = options.port ?? (await freePort());
  const base = options.baseUrl ?? `http://127.0.0.1:${port}/v1`;
  const args = [
    CONFIG,
    ...["--run.output_dir", out, "--run.name", name],
    ...["--inference.port", String(port), "--policy.base_url", JSON.stringify(base)],
    ...extra,
  ];
  const argv = options.wrapper ? ["bun", "run", "rl", ...args] : ["bun", RL, ...args];
  const log = join(options.logDir ?? out, `${name}-rl-${Date.now()}.log`);
  const t0 = Date.now();
  const stamp = () => `[+${((Date.now() - t0) / 1000).toFixed(2)} s]`;
  const child = trackChild(Bun.spawn(argv, { cwd: REPO, stdout: "pipe", stderr: "pipe", stdin: "ignore" }));
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    let rest = "";
    for await (const chunk of stream) {
      rest += decoder.decode(chunk, { stream: true });
      const lines = rest.split("\n");
      rest = lines.pop() ?? "";
      if (lines.length) appendFileSync(log, lines.map((l) => `${stamp()} ${l}\n`).join(""));
    }
    if (rest) appendFileSync(log, `${stamp()} ${rest}\n`);
  };
  const pumped = Promise.all([pump(child.stdout), pump(child.stderr)]).catch(() => {});
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 10 * 60_000);
  const exited = child.exited.then(async (code) => {
    clearTimeout(timer);
    await Promise.race([pumped, Bun.sleep(2000)]);
    return child.signalCode === "SIGKILL" && code !== 0 ? -1 : code;
  });
  return {
    child,
    runDir: join(out, name),
    log,
    exited,
    mark: (text) => appendFileSync(log, `${stamp()} >>> ${text}\n`),
    text: () => (existsSync(log) ? readFileSync(log, "utf8") : ""),
  };
}

/** What the run store says about a run's training rollouts. */
export interface StoreCheck {
  /** Store runs in air.db (a resumed run must stay one). */
  runs: number;
  status: string;
  /** Distinct training rollouts per step, by step. */
  perStep: Map<number, number>;
  /** Rollouts missing from steps 0..steps-1 (a step missing counts its whole batch). */
  lost: number;
  /** Rollouts recorded in more than one step, plus rollouts beyond the batch size in a step. */
  doubled: number;
  /** Rollouts recorded as failed (counted in their step's batch: failed, not lost). */
  failed: number;
  /** Steps whose batch had samples (a step without any takes no prime-rl step, so writes no batch file). */
  stepsWithSamples: number;
  /** SQLite's integrity_check answer. */
  integrity: string;
}

/**
 * Reads `<runDir>/air.db` read-only: per step its training rollouts (each of `batchSize` must be there once,
 * succeeded or failed), rollouts doubled across steps, store runs, integrity. Steps 0..`steps`-1 are checked
 * (default: up to the last step recorded, for a run that stopped early).
 * @example checkStore(runDir, 8, 6).lost // 0
 */
export function checkStore(runDir: string, batchSize: number, steps?: number): StoreCheck {
  const db = new Database(join(runDir, "air.db"), { readonly: true });
  try {
    const runs = db.query("SELECT status FROM runs").all() as Array<{ status: string }>;
    const rows = db
      .query(
        "SELECT step, rollout_id AS id, MAX(stop_reason = 'failed') AS failed FROM trajectories " +
          "WHERE split IS NOT 'eval' GROUP BY step, rollout_id",
      )
      .all() as Array<{ step: number; id: string; failed: number }>;
    const integrity = (db.query("PRAGMA integrity_check").get() as { integrity_check: string })
      .integrity_check;
    const withSamples = db.query("SELECT COUNT(*) AS n FROM steps WHERE sample_count > 0").get() as {
      n: number;
    };
    const perStep = new Map<number, number>();
    const stepsOf = new Map<string, number>();
    for (const r of rows) {
      perStep.set(r.step, (perStep.get(r.step) ?? 0) + 1);
      stepsOf.set(r.id, (stepsOf.get(r.id) ?? 0) + 1);
    }
    let lost = 0;
    let doubled = [...stepsOf.values()].filter((n) => n > 1).length;
    // a run that stopped early: the steps it recorded
    const upTo = steps ?? Math.max(-1, ...perStep.keys()) + 1;
    for (let s = 0; s < upTo; s++) {
      const n = perStep.get(s) ?? 0;
      lost += Math.max(0, batchSize - n);
      doubled += Math.max(0, n - batchSize);
    }
    return {
      runs: runs.length,
      status: runs.map((r) => r.status).join(","),
      perStep,
      lost,
      doubled,
      failed: rows.filter((r) => r.failed).length,
      stepsWithSamples: withSamples.n,
      integrity,
    };
  } finally {
    db.close();
  }
}

/**
 * The trainer's side (metrics.jsonl, one row per prime-rl step it trained): steps trained more than once, and steps
 * 1..`stepsWithSamples` it never trained (each air step with samples is one prime-rl step).
 * @example trainCheck(runDir, 6) // { twice: 0, never: 0 }
 */
export function trainCheck(runDir: string, stepsWithSamples: number): { twice: number; never: number } {
  const trained = trainedSteps(runDir);
  const once = new Set(trained);
  let never = 0;
  for (let s = 1; s <= stepsWithSamples; s++) if (!once.has(s)) never++;
  return { twice: trained.length - once.size, never };
}

/**
 * A fault's run checked on both sides, as an outcome row counts it: the store (rollouts lost or recorded twice)
 * and the trainer (steps trained twice or never); `store` for the rest of the row.
 * @example const { store, counts } = runCounts(runDir, 6); const outcome = { expected, left, ...counts, detail };
 */
export function runCounts(
  runDir: string,
  steps?: number,
): { store: StoreCheck; counts: { lost: number; doubled: number; trainedTwice: number; untrained: number } } {
  const store = checkStore(runDir, 8, steps);
  const trained = trainCheck(runDir, store.stepsWithSamples);
  return {
    store,
    counts: {
      lost: store.lost,
      doubled: store.doubled,
      trainedTwice: trained.twice,
      untrained: trained.never,
    },
  };
}
