import { EXIT, type LaunchOptions, type LaunchResult, planLaunch } from "./launch-plan.ts";
import { openSession, supervise } from "./launch-supervise.ts";
import { endRun } from "./launch-teardown.ts";
import { planOf } from "./run-plan.ts";
import type { RunConfig } from "./sections.ts";

export { EXIT, type LaunchOptions, type LaunchResult } from "./launch-plan.ts";

/**
 * Runs a whole training run in three parts, each reading the run's plan (`planOf`: made once when the config was
 * resolved, and the only place the config is read): plan the launch (GPU map, preflight, start step;
 * launch-plan.ts), supervise (the inference server and trainer as supervised children, the orchestrator in-process
 * with a progress view; launch-supervise.ts) and a teardown that always runs (children stopped, the run's
 * containers removed, pid file removed; launch-teardown.ts), whatever ended the run.
 * @example const { exitCode } = await launchRun(await resolveConfig("configs/mlgym/rl_debug.toml", []), { signal });
 */
export async function launchRun(config: RunConfig, options: LaunchOptions = {}): Promise<LaunchResult> {
  const out = options.out ?? ((t: string) => process.stdout.write(t));
  const err = options.err ?? ((t: string) => process.stderr.write(t));
  const run = planOf(config);
  const plan = await planLaunch(run, options, err);
  if ("exitCode" in plan) return plan;
  const session = await openSession(plan, options, out, err);
  const result: LaunchResult = { exitCode: EXIT.failed, killed: [], removedContainers: [] };
  if (plan.run.worker) err("[launcher] trainer worker node: only the trainer runs here (node_rank > 0)\n");
  try {
    result.summary = await supervise(session);
  } catch (error) {
    // whatever ended the run, the teardown below runs: this catch takes every error supervise throws
    if (!options.signal?.aborted) session.childFailure ??= (error as Error).message;
  }
  return endRun(session, result);
}
