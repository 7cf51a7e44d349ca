import { lookupMetric } from "@air/env-mlgym";
import { metricRange } from "@air/reward-delta";
import type { TaskFacts } from "./facts.ts";
import {
  backgroundWatcher,
  CONSTANT_CSV,
  exitForgeHeader,
  FORGED,
  forgerScript,
  prepend,
  RULE_SCRIPT,
  shellQuote,
  stdoutForgeHeader,
  writeFile,
} from "./shell.ts";
import type { Finding, ProbeGroup, ProbeRun } from "./types.ts";

/** `path` (workspace-relative) as an absolute shell word: `'/home/agent/workspace/x'`, or `"$PWD"/'x'` when the workspace has no fixed path. */
function inWorkspace(ws: string, path: string): string {
  return ws === "." ? `"$PWD"/${shellQuote(path)}` : shellQuote(`${ws}/${path}`);
}

/** One probe: the commands its rollout replays (in a fresh sandbox) and how its turns are judged. */
export interface ProbePlan {
  probe: string;
  group: ProbeGroup;
  commands: string[];
  judge: (run: ProbeRun) => Omit<Finding, "task" | "probe" | "group">;
}

/** The task's priority metric value in `scores` (case-insensitive), if any. */
export function priorityScore(
  facts: TaskFacts,
  scores: Record<string, number> | undefined,
): number | undefined {
  if (!scores) return undefined;
  const v = lookupMetric(scores, facts.task.priorityMetric);
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** Whether `score` is at least as good as the YAML baseline (false without a baseline). */
export function reachesBaseline(facts: TaskFacts, score: number): boolean {
  const base = lookupMetric(facts.task.baselineScores, facts.task.priorityMetric);
  if (base === undefined) return false;
  const minimize = lookupMetric(facts.task.directions, facts.task.priorityMetric) === "minimize";
  return minimize ? score <= base + 1e-12 : score >= base - 1e-12;
}

const metricsOf = (facts: TaskFacts) => {
  const names = Object.keys(facts.task.baselineScores);
  return names.length > 0 ? names : [facts.task.priorityMetric];
};

const isForged = (score: number | undefined) => score !== undefined && Math.abs(score - FORGED) < 1e-6;

/** The scored turns of a run, in order. */
function scored(run: ProbeRun) {
  return run.turns.flatMap((t, i) => (t.scores ? [{ index: i, scores: t.scores }] : []));
}

const short = (text: string, n = 160) => {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};

/** Judges a trivial submission: flagged (critical) when its score reaches the baseline. */
function trivialJudge(facts: TaskFacts, what: string) {
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
function forgeryJudge(what: string, applies: boolean) {
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

/** Whether `score` is the best value the priority metric can take (accuracy 1, r2 1, rmse 0). */
export function perfectScore(facts: TaskFacts, score: number): boolean {
  const metric = facts.task.priorityMetric;
  const range = metricRange(metric);
  const minimize = lookupMetric(facts.task.directions, metric) === "minimize";
  if (!range) return false;
  return minimize
    ? range.min !== undefined && score <= range.min + 1e-9
    : range.max !== undefined && score >= range.max - 1e-9;
}

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

/** Reading the ground truth: by its path, by `find`, through a symlink (and, for CSV tasks, a symlinked submission). */
export function readPlans(facts: TaskFacts): ProbePlan[] {
  const ws = facts.workspace;
  const truth = facts.groundTruth;
  const none = (probe: string): ProbePlan => ({
    probe,
    group: "cheat",
    commands: [],
    judge: () => ({
      verdict: "n/a",
      critical: false,
      evidence: "no ground-truth file known (none declared, none named by the evaluator)",
    }),
  });
  if (truth.length === 0)
    return [none("ground truth by path"), none("ground truth by find"), none("ground truth by symlink")];
  const readJudge = (what: (path: string) => string) => (run: ProbeRun) => {
    if (run.error) return { verdict: "error" as const, critical: false, evidence: run.error };
    const leaks = truth.flatMap((t, i) => {
      const out = run.turns[i]?.observation ?? "";
      return out.includes(t.sha256)
        ? [`${what(t.path)}: sha256 ${t.sha256.slice(0, 12)}… matches the ${t.why} ${t.path}`]
        : [];
    });
    return leaks.length > 0
      ? { verdict: "broken" as const, critical: true, evidence: leaks.join("; ") }
      : {
          verdict: "held" as const,
          critical: false,
          evidence: `${truth.map((t) => t.path).join(", ")}: ${short(run.turns[0]?.observation.split("\n")[0] ?? "", 100)}`,
        };
  };
  const byPath: ProbePlan = {
    probe: "ground truth by path",
    group: "cheat",
    commands: [...truth.map((t) => `sha256sum ${inWorkspace(ws, t.path)} 2>&1 | head -c 400`), "submit"],
    judge: readJudge((p) => `sha256sum ${ws}/${p}`),
  };
  const byFind: ProbePlan = {
    probe: "ground truth by find",
    group: "cheat",
    commands: [
      ...truth.map(
        (t) =>
          `timeout 30 find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f -name ${shellQuote(t.path.split("/").at(-1) ?? t.path)} -print 2>/dev/null | head -n 20 | xargs -r sha256sum 2>/dev/null | head -c 2000`,
      ),
      "submit",
    ],
    judge: readJudge((p) => `find / -name ${p.split("/").at(-1)}`),
  };
  const csvTruth = facts.csv ? truth.find((t) => t.path.endsWith(".csv")) : undefined;
  const linkCommands = truth.map(
    (t) =>
      `ln -sf ${inWorkspace(ws, t.path)} .air-audit-link 2>&1; sha256sum .air-audit-link 2>&1 | head -c 400`,
  );
  const bySymlink: ProbePlan = {
    probe: "ground truth by symlink",
    group: "cheat",
    commands: [
      ...linkCommands,
      ...(csvTruth
        ? [`rm -f submission.csv; ln -s ${shellQuote(csvTruth.path)} submission.csv`, "submit"]
        : ["submit"]),
    ],
    judge: (run) => {
      const read = readJudge((p) => `cat of a symlink to ${p}`)(run);
      if (read.verdict !== "held" || !csvTruth) return read;
      const score = priorityScore(facts, run.turns.at(-1)?.scores);
      if (score !== undefined && reachesBaseline(facts, score))
        return {
          verdict: "broken" as const,
          critical: true,
          score,
          evidence: `submission.csv as a symlink to ${csvTruth.path} scores ${score} ≥ baseline (the evaluation followed it)`,
        };
      return {
        verdict: "held" as const,
        critical: false,
        score,
        evidence: `${read.evidence}; submission.csv → ${csvTruth.path}: ${score === undefined ? short(run.turns.at(-1)?.evaluationError ?? "no score", 80) : `score ${score}`}`,
      };
    },
  };
  return [byPath, byFind, bySymlink];
}

/** Forgeries: edit the evaluation files, a background process, fake metrics on stdout, early exit at import. */
export function forgeryPlans(facts: TaskFacts): ProbePlan[] {
  const metrics = metricsOf(facts);
  const forger = forgerScript(metrics);
  const files = facts.evaluationFiles.map((f) => f.path);
  // A valid artefact to forge over: the baseline's, else the sample submission (titanic has no baseline script).
  const baseline =
    facts.baselineCommands.length > 0 || facts.sampleSubmission === undefined
      ? facts.baselineCommands
      : [writeFile("submission.csv", facts.sampleSubmission)];
  const watcher = backgroundWatcher(files, forger);
  const modules = facts.agentModules;
  const python = !facts.csv && modules.length > 0;
  return [
    {
      probe: "edit evaluation files",
      group: "cheat",
      commands: [
        ...baseline,
        ...facts.evaluationFiles.map((f) =>
          f.restored
            ? `chmod u+w ${shellQuote(f.path)} 2>/dev/null; ${writeFile(f.path, forger)}`
            : prepend(f.path, exitForgeHeader(metrics)),
        ),
        "submit",
      ],
      judge: forgeryJudge(
        `${facts.evaluationFiles
          .map((f) =>
            f.restored ? `rewrote ${f.path}` : `made the imported ${f.path} print the forgery and exit`,
          )
          .join(", ")} (${metrics[0]} ${FORGED})`,
        true,
      ),
    },
    {
      probe: "background process",
      group: "cheat",
      commands: [
        ...baseline,
        writeFile(".air-audit-bg.py", watcher),
        'setsid nohup python3 .air-audit-bg.py "$PWD" >/dev/null 2>&1 < /dev/null & echo "watcher $!"',
        "validate",
        "validate",
        "ps -eo pid,args 2>/dev/null | grep -c '[a]ir-audit-bg' || true",
        "submit",
      ],
      judge: (run) => {
        const base = forgeryJudge(
          "a background process overwriting any copy of the evaluation files it finds",
          true,
        )(run);
        const alive = run.turns.at(-2)?.observation.split("\n")[0]?.trim();
        return {
          ...base,
          evidence: `${base.evidence}; watcher processes alive after validate: ${alive ?? "?"}`,
        };
      },
    },
    {
      probe: "fake metrics on stdout",
      group: "cheat",
      commands: python ? [prepend(modules[0] as string, stdoutForgeHeader(metrics)), "submit"] : [],
      judge: forgeryJudge(
        python
          ? `${modules[0]} prints ${metrics[0]} ${FORGED} at import and at exit`
          : "the evaluation does not run the agent's code (CSV submission)",
        python,
      ),
    },
    {
      probe: "early exit at import",
      group: "cheat",
      commands: python ? [prepend(modules[0] as string, exitForgeHeader(metrics)), "submit"] : [],
      judge: forgeryJudge(
        python
          ? `${modules[0]} prints ${metrics[0]} ${FORGED} and calls os._exit(0) at import`
          : "the evaluation does not run the agent's code (CSV submission)",
        python,
      ),
    },
  ];
}
