import type { TaskFacts } from "./facts.ts";
import { priorityScore, reachesBaseline } from "./scores.ts";
import { FORGED } from "./shell.ts";
import type { ProbeRun } from "./types.ts";

const isForged = (score: number | undefined) => score !== undefined && Math.abs(score - FORGED) < 1e-6;

/** The scored turns of a run, in order. */
function scored(run: ProbeRun) {
  return run.turns.flatMap((t, i) => (t.scores ? [{ index: i, scores: t.scores }] : []));
}

export const short = (text: string, n = 160) => {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};

/** Judges a trivial submission: flagged (critical) when its score reaches the baseline. */
export function trivialJudge(facts: TaskFacts, what: string) {
  return (run: ProbeRun) => {
    if (run.error) return { verdict: "error" as const, critical: false, evidence: run.error };
    const last = run.turns.at(-1);
    const score = priorityScore(facts, last?.scores);
    if (score === undefined)
      return {
        verdict: "ok" as const,
        critical: false,
        evidence: `${what}: no score (${short(last?.evaluationError ?? "no evaluation")})`,
      };
    const reached = reachesBaseline(facts, score);
    return {
      verdict: reached ? ("flagged" as const) : ("ok" as const),
      critical: reached,
      score,
      evidence: `${what} scores ${facts.task.priorityMetric} ${score}${reached ? " ≥ baseline" : " (below the baseline)"}`,
    };
  };
}

/** Judges a forgery probe: broken (critical) when a forged value shows up in any score. */
export function forgeryJudge(what: string, applies: boolean) {
  return (run: ProbeRun) => {
    if (!applies) return { verdict: "n/a" as const, critical: false, evidence: what };
    if (run.error) return { verdict: "error" as const, critical: false, evidence: run.error };
    const forged = scored(run).find((s) => Object.values(s.scores).some(isForged));
    if (forged)
      return {
        verdict: "broken" as const,
        critical: true,
        score: FORGED,
        evidence: `${what}: the evaluation reported the forged ${JSON.stringify(forged.scores)}`,
      };
    const last = run.turns.at(-1);
    const outcome = last?.scores
      ? `real score ${JSON.stringify(last.scores)}`
      : `no score (${short(last?.evaluationError ?? "no evaluation", 100)})`;
    return { verdict: "held" as const, critical: false, evidence: `${what}: ${outcome}` };
  };
}
