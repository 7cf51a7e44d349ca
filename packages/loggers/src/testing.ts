import { Database } from "bun:sqlite";

/** One parsed step line: its step number and each `label value` column (`reward`, `turns/s`, `no-score`, …). */
export interface ParsedStepLine {
  step: number;
  /** An `eval after step N` line (a periodic evaluation), not a step's. */
  eval: boolean;
  columns: Map<string, string>;
  /** The seconds column (the line's last). */
  seconds: number;
  line: string;
}

const ESC = String.fromCharCode(27);
const COLUMN = /^([a-z/-]+(?: [a-z/-]+)*) (.+)$/;

/**
 * The step lines in a run's console output (`formatStepLine`, and `formatEvalLine`'s with `eval` set), redrawn
 * progress lines and log lines skipped.
 * @example parseStepLines(run.stdout()).map((l) => l.columns.get("turns/s"))
 */
export function parseStepLines(output: string): ParsedStepLine[] {
  const out: ParsedStepLine[] = [];
  for (const raw of output.split(/\r|\n/)) {
    const line = raw.split(`${ESC}[2K`).join("").trim();
    const head = /^(?:step|eval after step) (\d+)(?: \(\d+\/\d+\))? \| /.exec(line);
    if (!head) continue;
    const parts = line.split(" | ");
    const last = parts.at(-1) ?? "";
    if (!/^[\d.]+s$/.test(last)) continue;
    const columns = new Map<string, string>();
    for (const part of parts.slice(1, -1)) {
      const m = COLUMN.exec(part);
      if (m) columns.set(m[1]!, m[2]!);
    }
    out.push({
      step: Number(head[1]),
      eval: line.startsWith("eval"),
      columns,
      seconds: Number.parseFloat(last),
      line,
    });
  }
  return out;
}

/** What a run's store says about one step, recomputed from its rows (not from the logged metrics). */
export interface StoredStep {
  step: number;
  /** Wall time since the previous step's end (the run's start for step 0), from the store's timestamps. */
  seconds: number;
  /** Turns of the step's train rollouts, counted in the turns table. */
  turns: number;
  ok: number;
  failed: number;
  /** Ok rollouts of which no turn carries scores (tree runs: leaves whose path from the root has none). */
  unscored: number;
  /** The stored reward/mean (tree runs: tree/leaf_reward/mean). */
  rewardMean?: number;
  /** Tree runs only: the leaves (nodes that did not branch or fail). */
  leaves?: number;
  /** The periodic evaluation after this step: first rollout start to last rollout end, and its rollouts. */
  eval?: { seconds: number; ok: number; failed: number };
}

interface Row {
  id: string;
  parent: string | null;
  stop: string | null;
  scored: number;
}

/** Whether a tree node or any of its ancestors has a scored turn. */
function pathScored(row: Row | undefined, byId: Map<string, Row>): boolean {
  if (!row) return false;
  if (row.scored) return true;
  const parent = row.parent ? (JSON.parse(row.parent) as { trajectoryId?: string } | null) : null;
  return parent?.trajectoryId ? pathScored(byId.get(parent.trajectoryId), byId) : false;
}

/**
 * Per finished step, the figures a step line claims, recomputed from a run's air.db rows.
 * @example const steps = storedSteps(join(runDir, "air.db"));
 */
export function storedSteps(dbPath: string): StoredStep[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const run = db.query("SELECT id, started_at AS startedAt FROM runs ORDER BY id DESC LIMIT 1").get() as {
      id: number;
      startedAt: number;
    };
    const rows = db
      .query(
        `SELECT step, started_at AS startedAt, ended_at AS endedAt FROM steps
         WHERE run_id = ? AND ended_at IS NOT NULL ORDER BY step`,
      )
      .all(run.id) as Array<{ step: number; startedAt: number | null; endedAt: number }>;
    const turnsOf = db.query(
      `SELECT count(*) AS n FROM turns t JOIN trajectories r ON r.run_id = t.run_id AND r.rollout_id = t.rollout_id
       WHERE r.run_id = ? AND r.step = ? AND r.split = 'train'`,
    );
    const rollouts = db.query(
      `SELECT r.rollout_id AS id, r.parent_json AS parent, r.stop_reason AS stop, EXISTS (SELECT 1 FROM turns t WHERE t.run_id = r.run_id AND
         t.rollout_id = r.rollout_id AND t.scores_json IS NOT NULL AND t.scores_json != 'null') AS scored
       FROM trajectories r WHERE r.run_id = ? AND r.step = ? AND r.split = 'train'`,
    );
    const metric = db.query("SELECT value FROM metrics WHERE run_id = ? AND step = ? AND name = ?");
    const evals = db.query(
      `SELECT min(started_at) AS startedAt, max(ended_at) AS endedAt, count(*) AS n,
         sum(stop_reason = 'failed') AS failed FROM trajectories WHERE run_id = ? AND step = ? AND split = 'eval'`,
    );
    // Step 0's time starts at the run's start (creating the plugins included); a resumed run's first step at its
    // step:start.
    let previous = rows[0]?.step === 0 ? run.startedAt : (rows[0]?.startedAt ?? run.startedAt);
    return rows.map(({ step, endedAt }) => {
      const rs = rollouts.all(run.id, step) as Array<Row>;
      const ok = rs.filter((r) => r.stop !== "failed");
      const seconds = (endedAt - previous) / 1000;
      previous = endedAt;
      // The step's periodic eval runs before the next step's clock starts: its time is its own.
      const e = evals.get(run.id, step) as { startedAt: number; endedAt: number; n: number; failed: number };
      const evaluation =
        e.n > 0
          ? { seconds: (e.endedAt - e.startedAt) / 1000, ok: e.n - e.failed, failed: e.failed }
          : undefined;
      if (evaluation) previous += evaluation.seconds * 1000;
      const tree = rs.some((r) => r.stop === "branched");
      const value = (name: string) => (metric.get(run.id, step, name) as { value: number } | null)?.value;
      const common = {
        step,
        seconds,
        turns: (turnsOf.get(run.id, step) as { n: number }).n,
        eval: evaluation,
      };
      const counts = { ok: ok.length, failed: rs.length - ok.length };
      if (!tree) {
        const unscored = ok.filter((r) => !r.scored).length;
        return { ...common, ...counts, unscored, rewardMean: value("reward/mean") };
      }
      const leaves = ok.filter((r) => r.stop !== "branched");
      const unscored = leaves.filter((r) => !pathScored(r, new Map(rs.map((x) => [x.id, x])))).length;
      return {
        ...common,
        ...counts,
        leaves: leaves.length,
        unscored,
        rewardMean: value("tree/leaf_reward/mean"),
      };
    });
  } finally {
    db.close();
  }
}

/** Within a factor of `factor` either way, with `slack` absolute for small figures. */
export function withinFactor(shown: number, truth: number, factor = 2, slack = 0): boolean {
  return shown <= truth * factor + slack && shown >= truth / factor - slack;
}

/**
 * Checks a run's step lines against its store and returns what is wrong (empty when every figure holds):
 * one line per finished step; the seconds and `turns/s` within `factor` of the store's timestamps and turns
 * ("–" only for a step shorter than `minRateS`); rollouts ok/failed and reward as stored; and columns the run
 * cannot produce (`absent`) not shown, those it can (`present`) shown.
 * @example expect(checkStepLines(run.stdout(), dbPath, { absent: ["no-score"] })).toEqual([]);
 */
export function checkStepLines(
  output: string,
  dbPath: string,
  options: { absent?: string[]; present?: string[]; factor?: number; minRateS?: number } = {},
): string[] {
  const factor = options.factor ?? 2;
  const all = parseStepLines(output);
  const lines = all.filter((l) => !l.eval);
  const stored = storedSteps(dbPath);
  const problems: string[] = [];
  for (const s of stored) {
    const line = all.find((l) => l.eval && l.step === s.step);
    if (!s.eval !== !line)
      problems.push(
        `step ${s.step}: ${s.eval ? "an eval in the store, no eval line" : "an eval line, none in the store"}`,
      );
    if (!s.eval || !line) continue;
    const rollouts = `${s.eval.ok} ok / ${s.eval.failed} failed`;
    if (line.columns.get("rollouts") !== rollouts)
      problems.push(`${line.line}: stored eval rollouts ${rollouts}`);
    if (!withinFactor(line.seconds, s.eval.seconds, factor, 0.15))
      problems.push(`${line.line}: the store's eval rollouts span ${s.eval.seconds.toFixed(3)}s`);
  }
  if (lines.length !== stored.length)
    problems.push(`${lines.length} step line(s) for ${stored.length} finished step(s) in the store`);
  for (const s of stored) {
    const line = lines.find((l) => l.step === s.step);
    if (!line) {
      problems.push(`step ${s.step}: no step line`);
      continue;
    }
    const say = (what: string) => problems.push(`step ${s.step}: ${what} in "${line.line}"`);
    if (!withinFactor(line.seconds, s.seconds, factor, 0.15))
      say(`${line.seconds}s shown, ${s.seconds.toFixed(3)}s between the store's step ends`);
    const rate = line.columns.get("turns/s");
    const truth = s.turns / s.seconds;
    if (rate === undefined) say("no turns/s column");
    else if (rate === "–") {
      if (s.seconds >= (options.minRateS ?? 0.05) * factor)
        say(`turns/s – for a ${s.seconds.toFixed(3)}s step`);
    } else if (!withinFactor(Number(rate), truth, factor, 0.5))
      say(
        `turns/s ${rate} shown, ${truth.toFixed(2)} from the store (${s.turns} turns in ${s.seconds.toFixed(3)}s)`,
      );
    const label = s.leaves === undefined ? "rollouts" : "nodes";
    const rollouts = `${s.ok} ok / ${s.failed} failed${s.leaves === undefined ? "" : ` (${s.leaves} leaves)`}`;
    if (line.columns.get(label) !== rollouts)
      say(`${label} "${line.columns.get(label)}", stored ${rollouts}`);
    const reward = line.columns.get("reward")?.split(" ")[0];
    if (s.rewardMean !== undefined && reward !== s.rewardMean.toFixed(3))
      say(`reward ${reward}, stored reward/mean ${s.rewardMean.toFixed(3)}`);
    const noScore = line.columns.get("no-score");
    const of = s.leaves ?? s.ok;
    if (noScore !== undefined && of > 0) {
      const frac = Math.round((100 * s.unscored) / of);
      if (Math.abs(Number.parseInt(noScore, 10) - frac) > 25)
        say(`no-score ${noScore}, ${frac}% unscored in the store`);
    }
    for (const c of options.absent ?? []) if (line.columns.has(c)) say(`column ${c} the run cannot produce`);
    for (const c of options.present ?? []) if (!line.columns.has(c)) say(`no ${c} column`);
  }
  return problems;
}

/**
 * Info log lines printed once a step (the same text up to its numbers, at least `minRepeats` times): progress,
 * which belongs in the step line or the debug log, not in a second display between the step lines.
 * @example expect(perStepLogLines(run.stdout() + run.stderr())).toEqual([]);
 */
export function perStepLogLines(output: string, minRepeats = 3): string[] {
  const counts = new Map<string, { n: number; example: string }>();
  for (const raw of output.split(/\r|\n/)) {
    const line = raw.trim();
    // warnings and errors are about the run, each said once by the run's log; info is what could be progress
    if (!/^info\s/.test(line)) continue;
    const shape = line.replace(/\d+(\.\d+)?/g, "#");
    const seen = counts.get(shape) ?? { n: 0, example: line };
    seen.n++;
    counts.set(shape, seen);
  }
  return [...counts.values()].filter((c) => c.n >= minRepeats).map((c) => `${c.n}× ${c.example}`);
}
