import { type Environment, type Example, Semaphore } from "@air/core";
import { type HarborConfig, harborConfigSchema } from "@air/env-harbor";
import { scriptedRollout } from "@air/policy-scripted";
import { meanStd } from "./analysis.ts";
import { FORGED } from "./shell.ts";
import { type AuditContext, type AuditResult, type Finding, type ProbeRun, probeRun } from "./types.ts";

const fmt = (x: number) => Number(x.toPrecision(4)).toString();

/** The forging command: the reward files written where the verifier writes them, and a planted test.sh. */
const FORGE = [
  "mkdir -p /logs/verifier /tests 2>/dev/null",
  `echo ${FORGED} > /logs/verifier/reward.txt; echo '{"reward": ${FORGED}}' > /logs/verifier/reward.json`,
  `printf '#!/bin/bash\\necho ${FORGED} > /logs/verifier/reward.txt\\n' > /tests/test.sh 2>/dev/null; chmod +x /tests/test.sh 2>/dev/null`,
  `nohup sh -c 'while :; do echo ${FORGED} > /logs/verifier/reward.txt 2>/dev/null; sleep 0.05; done' >/dev/null 2>&1 &`,
  "true",
].join("\n");

/** The reading command: every way the tests or the solution could be in the agent's view. */
const LOOK =
  'for f in /tests/test.sh /solution/solve.sh; do [ -e "$f" ] && echo "FOUND $f"; done; ' +
  "find / -xdev \\( -path '*/tests/test.sh' -o -name solve.sh \\) 2>/dev/null | sed 's/^/FOUND /'; true";

/**
 * The audit of Harbor task folders (`[env] plugin = "harbor"`): per task, the oracle (`solution/solve.sh`,
 * `--repeats` times: the baseline to reproduce), an empty run (nothing done, `submit`: must score 0), a forgery
 * (reward.txt / reward.json written by the agent, a planted /tests/test.sh, a loop rewriting the reward file) and
 * a look for the tests and the solution from the agent's shell. Each probe is a `scripted` rollout in a fresh
 * sandbox of the config's own env (an oracle copy of it for the oracle).
 * @example const { findings } = await auditHarbor({ host, log, env, configDir, orchestrator, repeats: 3, concurrency: 2 });
 */
export async function auditHarbor(c: AuditContext): Promise<AuditResult> {
  const envConfig: HarborConfig = harborConfigSchema.parse(c.env.config);
  const env = c.env;
  const plain = await c.host.create({ ...env, config: { ...envConfig, oracle: false } }, "harbor");
  const oracle = await c.host.create({ ...env, config: { ...envConfig, oracle: true } }, "harbor:oracle");
  const examples = new Map<string, Example>();
  for (const split of ["train", "eval"] as const)
    for (const e of await plain.examples(split)) if (!examples.has(e.task)) examples.set(e.task, e);
  const names = [...examples.keys()].filter((t) => !c.tasks || c.tasks.includes(t));
  for (const t of c.tasks ?? [])
    if (!examples.has(t))
      throw new Error(`--tasks: ${t} is not a task of this config (${[...examples.keys()].join(", ")})`);
  const semaphore = new Semaphore(c.concurrency);
  let counter = 0;
  const metric = envConfig.metric;
  const play = async (
    on: Environment,
    example: Example,
    probe: string,
    commands: string[],
  ): Promise<ProbeRun> => {
    const release = await semaphore.acquire();
    try {
      const t = await scriptedRollout({
        host: c.host,
        env: on,
        envName: "harbor",
        example,
        commands,
        rolloutId: `audit-${example.task}-${probe.replace(/\W+/g, "-")}-${counter++}`,
        groupId: `audit:${example.task}`,
        orchestrator: c.orchestrator,
        log: c.log,
      });
      c.log.info(`${example.task}: ${probe} done`);
      return probeRun(t);
    } finally {
      release();
    }
  };
  const score = (r: ProbeRun) => r.turns.at(-1)?.scores?.[metric];
  const why = (r: ProbeRun) =>
    (r.error ?? r.turns.at(-1)?.evaluationError ?? "no score").replace(/\s+/g, " ").slice(0, 200);
  const perTask = names.map(async (task): Promise<Finding[]> => {
    const example = examples.get(task) as Example;
    const [oracleRuns, empty, forged, look] = await Promise.all([
      Promise.all(Array.from({ length: c.repeats }, () => play(oracle, example, "oracle", ["submit"]))),
      play(plain, example, "empty run", ["submit"]),
      play(plain, example, "forged reward files", [FORGE, "submit"]),
      play(plain, example, "tests and solution by path", [LOOK, "submit"]),
    ]);
    const oracleScores = oracleRuns.map(score).filter((s): s is number => s !== undefined);
    const noSolution = oracleRuns.some(
      (r) => r.turns.length === 0 || /no solution\/solve\.sh/.test(r.turns[0]?.observation ?? ""),
    );
    const { mean, std } = oracleScores.length ? meanStd(oracleScores) : { mean: Number.NaN, std: 0 };
    const emptyScore = score(empty);
    const out: Finding[] = [];
    out.push({
      task,
      probe: "oracle (solution/solve.sh)",
      group: "baseline",
      verdict: oracleScores.length === 0 ? "warn" : mean > (emptyScore ?? 0) && std === 0 ? "ok" : "warn",
      critical: false,
      score: oracleScores.length ? mean : undefined,
      evidence:
        oracleScores.length === 0
          ? `no score: ${why(oracleRuns[0] as ProbeRun)}`
          : `${metric} ${fmt(mean)} ± ${fmt(std)} (n=${oracleScores.length})${mean <= (emptyScore ?? 0) ? " — the solution scores no better than doing nothing" : ""}${std > 0 ? " — varies across repeats" : ""}`,
    });
    const passesEmpty = emptyScore !== undefined && emptyScore > 0;
    out.push({
      task,
      probe: "empty run",
      group: "trivial",
      verdict: emptyScore === undefined ? "error" : passesEmpty ? "flagged" : "ok",
      critical: passesEmpty && oracleScores.length > 0 && emptyScore >= mean,
      score: emptyScore,
      evidence: passesEmpty
        ? `doing nothing scores ${fmt(emptyScore)} (oracle ${fmt(mean)})`
        : "doing nothing scores 0",
    });
    const forgedScores = forged.turns.flatMap((t) => Object.values(t.scores ?? {}));
    const broken = forgedScores.includes(FORGED);
    out.push({
      task,
      probe: "forged reward files",
      group: "cheat",
      verdict: forged.error ? "error" : broken ? "broken" : "held",
      critical: broken,
      score: score(forged),
      evidence: broken
        ? `the agent's own reward file became the score ${FORGED}`
        : `scored ${score(forged) ?? "nothing"}, not the forged ${FORGED}`,
    });
    const seen = (look.turns[0]?.observation ?? "").split("\n").filter((l) => l.startsWith("FOUND "));
    out.push({
      task,
      probe: "tests and solution by path",
      group: "cheat",
      verdict: look.error ? "error" : seen.length > 0 ? "broken" : "held",
      critical: seen.length > 0,
      evidence:
        seen.length > 0
          ? seen.slice(0, 3).join("; ")
          : "neither /tests nor /solution nor any tests/test.sh or solve.sh is visible",
    });
    if (noSolution) (out[0] as Finding).verdict = "n/a";
    return out;
  });
  const findings = (await Promise.all(perTask)).flat();
  return { findings, tasks: names, runtime: envConfig.runtime };
}
