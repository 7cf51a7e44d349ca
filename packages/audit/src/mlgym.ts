import { resolve } from "node:path";
import { AirError, type Example, Semaphore } from "@air/core";
import { loadTaskSet, mlgymConfigSchema } from "@air/env-mlgym";
import { scriptedRollout } from "@air/policy-scripted";
import { tamperOf } from "@air/reward-delta";
import { SANDBOX_WORKSPACE } from "@air/sandbox";
import { baselineFindings, metricFindings } from "./analysis.ts";
import { type TaskFacts, taskFacts } from "./facts.ts";
import { forgeryPlans } from "./forgery-probes.ts";
import { noiseFinding } from "./noise.ts";
import { baselinePlan, type ProbePlan, trivialPlans } from "./probes.ts";
import { readPlans } from "./read-probes.ts";
import { type AuditContext, type AuditResult, type Finding, type ProbeRun, probeRun } from "./types.ts";

const slug = (text: string) => text.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "");

/**
 * The audit of MLGym-format tasks (`[env] plugin = "mlgym"`): per task, the baseline (`repeats` times: its
 * reproduction and the evaluation noise), trivial submissions, reads of what the agent must not see, forgeries,
 * and metric sanity over all of them. Each probe is a `scripted` rollout in a fresh sandbox of the config's own
 * env (same runtime, same evaluation).
 * @example const { findings } = await auditMlgym({ host, log, env, configDir, orchestrator, repeats: 3, concurrency: 4 });
 */
export async function auditMlgym(c: AuditContext): Promise<AuditResult> {
  const envConfig = mlgymConfigSchema.parse(c.env.config);
  const root = resolve(c.configDir, envConfig.mlgym_root);
  const set = await loadTaskSet(envConfig, root);
  const wanted = c.tasks?.map((t) => set.idOf.get(t) ?? t);
  for (const w of wanted ?? [])
    if (!set.byId.has(w))
      throw new AirError(
        "CONFIG_INVALID",
        `--tasks: ${w} is not a task of this config (${[...set.byId.keys()].join(", ")})`,
      );
  const env = await c.host.create(c.env);
  const examples = new Map<string, Example>();
  for (const split of ["train", "eval"] as const)
    for (const e of await env.examples(split)) if (!examples.has(e.task)) examples.set(e.task, e);
  // Where the agent's shell sees its workspace; the unsandboxed runtime has no fixed path (relative paths).
  const workspace =
    envConfig.runtime === "docker"
      ? envConfig.docker.workspace
      : envConfig.local.isolation === "bwrap"
        ? SANDBOX_WORKSPACE
        : ".";
  const semaphore = new Semaphore(c.concurrency);
  let counter = 0;
  const play = async (facts: TaskFacts, example: Example, plan: ProbePlan, repeat = 0): Promise<ProbeRun> => {
    if (plan.commands.length === 0) return { turns: [] };
    const release = await semaphore.acquire();
    try {
      const t = await scriptedRollout({
        host: c.host,
        env,
        envName: "mlgym",
        example,
        commands: plan.commands,
        rolloutId: `audit-${slug(facts.task.id)}-${slug(plan.probe)}-${repeat}-${counter++}`,
        groupId: `audit:${facts.task.id}`,
        orchestrator: c.orchestrator,
        log: c.log,
      });
      c.log.info(`${facts.task.id}: ${plan.probe}${plan.group === "baseline" ? ` #${repeat + 1}` : ""} done`);
      return probeRun(t);
    } finally {
      release();
    }
  };
  const tasks: string[] = [];
  const perTask = [...set.byId.values()]
    .filter((task) => !wanted || wanted.includes(task.id))
    .map(async (task) => {
      tasks.push(task.id);
      const example = examples.get(task.id);
      if (!example) throw new AirError("ENV_FAILED", `the env has no example of task ${task.id}`);
      const facts = taskFacts(task, workspace);
      const base = baselinePlan(facts);
      const baselineRuns = facts.baselineRunnable
        ? Promise.all(Array.from({ length: c.repeats }, (_, i) => play(facts, example, base, i)))
        : Promise.resolve([]);
      const plans = [...trivialPlans(facts), ...readPlans(facts), ...forgeryPlans(facts)];
      const probeRuns = Promise.all(plans.map((p) => play(facts, example, p)));
      const [bRuns, pRuns] = await Promise.all([baselineRuns, probeRuns]);
      const out: Finding[] = [
        ...baselineFindings(facts, bRuns).map((f) => ({ ...f, task: task.id })),
        ...(facts.baselineRunnable ? [{ ...noiseFinding(facts, bRuns), task: task.id }] : []),
        ...plans.map((p, i) => {
          const run = pRuns[i] as ProbeRun;
          const tamper = [...new Set(run.turns.flatMap((t) => tamperOf(t)))];
          return {
            task: task.id,
            probe: p.probe,
            group: p.group,
            ...p.judge(run),
            ...(tamper.length > 0 ? { tamper } : {}),
          };
        }),
        ...metricFindings(facts, bRuns, [...bRuns, ...pRuns]).map((f) => ({ ...f, task: task.id })),
      ];
      return out;
    });
  const findings = (await Promise.all(perTask)).flat();
  const runtime = envConfig.runtime === "local" ? `local (${envConfig.local.isolation})` : "docker";
  return { findings, tasks, runtime };
}
