import { type LaunchContext, type ResolvedPlugin, sleep } from "@air/core";
import { groupMembers, killGroup } from "./proc.ts";
import type { PlannedProcess } from "./process-kinds.ts";
import type { ChildSpec, Supervised, Supervisor } from "./supervisor.ts";

/**
 * How many times the launcher may still restart a crashed trainer (`[trainer_process] max_restarts`, counted over
 * the whole run as torchrun counts `--max-restarts`). Only the trainer is restarted: an inference server that
 * dies takes the run down (its rollouts in flight are lost with it).
 * @example const budget = new RestartBudget(2); budget.take(child) // true, true, then false
 */
export class RestartBudget {
  private used = 0;

  constructor(readonly max: number) {}

  /** Restarts taken so far. */
  get restarts(): number {
    return this.used;
  }

  /** True (and one restart used) when `child` is the trainer and the budget has one left. */
  take(child: Pick<Supervised, "spec">): boolean {
    if (child.spec.role !== "trainer" || this.used >= this.max) return false;
    this.used++;
    return true;
  }

  /** The run's error once the budget is spent (or for a child that is never restarted). */
  failure(child: Pick<Supervised, "spec">, reason: string): string {
    if (child.spec.role !== "trainer" || this.max === 0) return reason;
    return `${reason}\n(the trainer was restarted ${this.used} time(s); [trainer_process] max_restarts = ${this.max})`;
  }
}

/**
 * Configs where the trainer process cannot run or restarting it cannot continue the run, for `rl validate` (exit
 * 2): the trainer process kind's own problems (prime-rl: `max_restarts` without checkpoints); with several nodes
 * one node's ranks cannot rejoin the others alone; the trainer plugin's `launch.restartProblems` (e.g. with the
 * ZMQ transport the batch in flight went to the dead trainer's socket and is not sent again).
 * Reads the run's plan: its trainer process (kind and context) and the context plugins' launch hooks get.
 * @example restartProblems(plan.trainer, plan.config.plugins.trainer, plan.launch) // ["trainer_process.max_restarts: ... (run.toml)"]
 */
export function restartProblems(
  trainer: PlannedProcess | undefined,
  plugin: ResolvedPlugin<"trainer">,
  launch: LaunchContext,
): string[] {
  if (!trainer) return [];
  const { trainerProcess: tp, configFile } = trainer.ctx;
  const problems: string[] = [];
  if (tp.max_restarts > 0 && tp.nnodes > 1)
    problems.push(
      `trainer_process.max_restarts: one node's ranks cannot be restarted alone (the others wait in the ` +
        `rendezvous); for multi-node use torchrun's own --max-restarts in extra_args (${configFile})`,
    );
  for (const problem of trainer.kind.problems?.(trainer.ctx) ?? [])
    problems.push(`${problem} (${configFile})`);
  if (tp.max_restarts === 0) return problems;
  for (const problem of plugin.definition.launch?.restartProblems?.(plugin.config, launch) ?? [])
    problems.push(`${problem} (${configFile})`);
  return problems;
}

/**
 * Prepares a restart of the crashed trainer and says the checkpoint step it resumes from, through the trainer
 * plugin's `launch.restartStep` hook (prime-rl: the newest complete checkpoint at or before the newest finished
 * broadcast; undefined: a fresh start). Called right before the restarted trainer starts, it then lets the plugin
 * set aside what that trainer would rewrite in place while the server may load it (`launch.beforeRestart`;
 * prime-rl: broadcasts from that step on). `launch`: the plan's (`RunPlan.launch`).
 * @example prepareRestart(plan.config.plugins.trainer, plan.launch) // 3
 */
export function prepareRestart(plugin: ResolvedPlugin<"trainer">, launch: LaunchContext): number | undefined {
  const { definition, config } = plugin;
  const step = definition.launch?.restartStep?.(config, launch);
  definition.launch?.beforeRestart?.(config, launch, step);
  return step;
}

/**
 * Starts a crashed child again: whatever is left of its process group (a torchrun worker still dying) is killed
 * first, so the new one does not share GPUs or ports with it, then `build()` gives the command (for prime-rl with
 * the resume step of the moment) and the supervisor starts it. Nothing starts once `signal` aborted. Throws when
 * the command cannot be built or started.
 * @example await restartChild({ supervisor, child, build: () => trainerChild(config, gpus), signal });
 */
export async function restartChild(options: {
  supervisor: Supervisor;
  child: Supervised;
  build: () => Promise<ChildSpec | undefined>;
  signal: AbortSignal;
}): Promise<Supervised | undefined> {
  const { child } = options;
  killGroup(child.pgid, "SIGKILL");
  const deadline = Date.now() + 5000;
  while (groupMembers(child.pgid).length > 0 && Date.now() < deadline) await sleep(50);
  const spec = await options.build();
  if (!spec || options.signal.aborted) return undefined;
  return options.supervisor.start(spec);
}
