import type { TaskFacts } from "./facts.ts";
import { short, trivialJudge } from "./judges.ts";
import { perfectScore, priorityScore, reachesBaseline } from "./scores.ts";
import { CONSTANT_CSV, RULE_SCRIPT, shellQuote, writeFile } from "./shell.ts";
import type { Finding, ProbeGroup, ProbeRun } from "./types.ts";

/** One probe: the commands its rollout replays (in a fresh sandbox) and how its turns are judged. */
export interface ProbePlan {
  probe: string;
  group: ProbeGroup;
  commands: string[];
  judge: (run: ProbeRun) => Omit<Finding, "task" | "probe" | "group">;
}

/** Baseline commands then `submit`, repeated by the caller. */
export function baselinePlan(facts: TaskFacts): ProbePlan {
  return {
    probe: "baseline",
    group: "baseline",
    commands: [...facts.baselineCommands, "submit"],
    judge: (run) => {
      const score = priorityScore(facts, run.turns.at(-1)?.scores);
      return run.error || score === undefined
        ? {
            verdict: "error",
            critical: false,
            evidence: run.error ?? run.turns.at(-1)?.evaluationError ?? "no score",
          }
        : { verdict: "ok", critical: false, score, evidence: "one repeat" };
    },
  };
}

/** The trivial submissions: missing, the sample submission, constant predictions, copies of readable files. */
export function trivialPlans(facts: TaskFacts): ProbePlan[] {
  const plans: ProbePlan[] = [];
  const removeArtefact = facts.csv
    ? "rm -f submission.csv"
    : `rm -f ${facts.agentModules.map(shellQuote).join(" ") || "strategy.py"}`;
  plans.push({
    probe: "missing submission",
    group: "trivial",
    commands: [removeArtefact, "submit"],
    judge: trivialJudge(facts, facts.csv ? "no submission.csv" : `no ${facts.agentModules.join(", ")}`),
  });
  if (facts.sampleSubmission !== undefined) {
    plans.push({
      probe: "sample submission",
      group: "trivial",
      commands: [writeFile("submission.csv", facts.sampleSubmission), "submit"],
      judge: trivialJudge(facts, "the shipped sample submission"),
    });
  }
  const template =
    facts.sampleSubmission !== undefined
      ? [writeFile("submission.csv", facts.sampleSubmission)]
      : facts.baselineCommands;
  if (facts.csv && template.length > 0) {
    plans.push({
      probe: "constant predictions",
      group: "trivial",
      commands: [...template, CONSTANT_CSV, "submit"],
      judge: trivialJudge(facts, "every prediction set to its most common value"),
    });
  }
  if (facts.csv && (facts.sampleSubmission !== undefined || facts.baselineCommands.length > 0))
    plans.push(
      rulePlan(
        facts,
        facts.sampleSubmission !== undefined
          ? writeFile(".air-audit-sample.csv", facts.sampleSubmission)
          : `${facts.baselineCommands.join(" && ")} && cp submission.csv .air-audit-sample.csv`,
      ),
    );
  if (facts.copyCandidates.length > 0) {
    const files = facts.copyCandidates;
    plans.push({
      probe: "copy of a readable file",
      group: "trivial",
      commands: [
        ...files.flatMap((f) => [`rm -f submission.csv; cp ${shellQuote(f)} submission.csv`, "validate"]),
        "rm -f submission.csv",
        "submit",
      ],
      judge: (run) => {
        if (run.error) return { verdict: "error", critical: false, evidence: run.error };
        const results = files.map((f, i) => ({
          f,
          score: priorityScore(facts, run.turns[2 * i + 1]?.scores),
        }));
        const hits = results.filter((r) => r.score !== undefined && reachesBaseline(facts, r.score));
        const best = hits[0] ?? results.find((r) => r.score !== undefined);
        const scoredList = results.filter((r) => r.score !== undefined).map((r) => `${r.f} → ${r.score}`);
        return {
          verdict: hits.length > 0 ? "flagged" : "ok",
          critical: hits.length > 0,
          score: best?.score,
          evidence:
            hits.length > 0
              ? `${hits.map((h) => `${h.f} scores ${h.score}`).join("; ")} ≥ baseline`
              : `${files.length} file(s) tried; ${scoredList.length ? `scored: ${scoredList.join("; ")}` : "none scored"}`,
        };
      },
    });
  }
  return plans;
}

const RULES = 8;

/**
 * One-feature rules (CSV tasks; the sample submission, else the baseline's, gives the id and target columns): each of up to 8 test
 * columns with 2–10 values, mapped to the train rows' majority target, validated. A rule with a perfect score
 * means the ground truth is that rule (titanic's is "female survives"): critical; one that only reaches the
 * baseline is a warning.
 */
function rulePlan(facts: TaskFacts, template: string): ProbePlan {
  const indices = Array.from({ length: RULES }, (_, k) => k);
  return {
    probe: "one-feature rule",
    group: "trivial",
    commands: [
      `${writeFile(".air-audit-rule.py", RULE_SCRIPT)}\n${template}`,
      ...indices.flatMap((k) => [`python3 .air-audit-rule.py ${k} .air-audit-sample.csv`, "validate"]),
      "rm -f submission.csv",
      "submit",
    ],
    judge: (run) => {
      if (run.error) return { verdict: "error", critical: false, evidence: run.error };
      const rules = indices.flatMap((k) => {
        const said = run.turns[1 + 2 * k]?.observation.split("\n")[0] ?? "";
        const score = priorityScore(facts, run.turns[2 + 2 * k]?.scores);
        return said.startsWith("rule ") && score !== undefined ? [{ rule: said.slice(5), score }] : [];
      });
      const metric = facts.task.priorityMetric;
      const perfect = rules.find((r) => perfectScore(facts, r.score));
      if (perfect)
        return {
          verdict: "flagged",
          critical: true,
          score: perfect.score,
          evidence: `${short(perfect.rule, 120)} scores ${metric} ${perfect.score}: the ground truth is a one-feature rule`,
        };
      const reached = rules.filter((r) => reachesBaseline(facts, r.score));
      const best =
        rules.length === 0
          ? undefined
          : facts.task.directions[metric] === "minimize"
            ? rules.reduce((a, b) => (b.score < a.score ? b : a))
            : rules.reduce((a, b) => (b.score > a.score ? b : a));
      return {
        verdict: rules.length === 0 ? "n/a" : reached.length > 0 ? "warn" : "ok",
        critical: false,
        score: best?.score,
        evidence:
          rules.length === 0
            ? `no rule scored (${short(run.turns[1]?.observation.split("\n")[0] ?? "", 100)})`
            : `${rules.length} rule(s); best ${short(best?.rule ?? "", 80)} → ${best?.score}${reached.length > 0 ? " ≥ baseline" : ""}`,
      };
    },
  };
}
