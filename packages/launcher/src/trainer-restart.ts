import { sleep } from "@air/core";
import { launchContext } from "./launch-context.ts";
import { groupMembers, killGroup } from "./proc.ts";
import { processContext, trainerKind } from "./process-kinds.ts";
import type { RunConfig } from "./sections.ts";
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
 * @example restartProblems(config) // ["trainer_process.max_restarts: ... (run.toml)"]
 */
export function restartProblems(config: RunConfig): string[] {
  const { trainer_process: tp } = config.root;
  const kind = trainerKind(config);
  if (!kind) return [];
  const problems: string[] = [];
  if (tp.max_restarts > 0 && tp.nnodes > 1)
    problems.push(
      `trainer_process.max_restarts: one node's ranks cannot be restarted alone (the others wait in the ` +
        `rendezvous); for multi-node use torchrun's own --max-restarts in extra_args (${config.file})`,
    );
  for (const problem of kind.problems?.(processContext(config)) ?? [])
    problems.push(`${problem} (${config.file})`);
  if (tp.max_restarts === 0) return problems;
  const { definition, config: trainerConfig } = config.plugins.trainer;
  for (const problem of definition.launch?.restartProblems?.(trainerConfig, launchContext(config)) ?? [])
    problems.push(`${problem} (${config.file})`);
  return problems;
}

/**
 * The checkpoint step a restarted trainer resumes from, through the trainer plugin's `launch.restartStep` hook
 * (prime-rl: the newest complete checkpoint at or before the newest finished broadcast). Undefined: a fresh start.
 * Called right before the restarted trainer starts, it also lets the plugin set aside what that trainer would
 * rewrite in place while the server may load it (`launch.beforeRestart`; prime-rl: broadcasts from that step on).
 * @example restartResumeStep(config) // 3
 */
export function restartResumeStep(config: RunConfig): number | undefined {
  const { definition, config: trainerConfig } = config.plugins.trainer;
  const ctx = launchContext(config);
  const step = definition.launch?.restartStep?.(trainerConfig, ctx);
  definition.launch?.beforeRestart?.(trainerConfig, ctx, step);
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
