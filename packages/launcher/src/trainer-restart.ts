import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { sleep } from "@air/core";
import TOML from "@iarna/toml";
import { launchContext } from "./plugin-needs.ts";
import { groupMembers, killGroup } from "./proc.ts";
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
  take(child: Supervised): boolean {
    if (child.spec.role !== "trainer" || this.used >= this.max) return false;
    this.used++;
    return true;
  }

  /** The run's error once the budget is spent (or for a child that is never restarted). */
  failure(child: Supervised, reason: string): string {
    if (child.spec.role !== "trainer" || this.max === 0) return reason;
    return `${reason}\n(the trainer was restarted ${this.used} time(s); [trainer_process] max_restarts = ${this.max})`;
  }
}

/**
 * Configs where restarting the trainer cannot continue the run, for `rl validate` (exit 2): with the ZMQ
 * transport the batch in flight went to the dead trainer's socket and is not sent again; with several nodes one
 * node's ranks cannot rejoin the others alone.
 * @example restartProblems(config) // ["trainer_process.max_restarts: ... (run.toml)"]
 */
export function restartProblems(config: RunConfig): string[] {
  const { trainer_process: tp } = config.root;
  if (tp.max_restarts === 0 || tp.kind === "none") return [];
  const problems: string[] = [];
  if (tp.nnodes > 1)
    problems.push(
      `trainer_process.max_restarts: one node's ranks cannot be restarted alone (the others wait in the ` +
        `rendezvous); for multi-node use torchrun's own --max-restarts in extra_args (${config.file})`,
    );
  const ckpt = trainerCheckpointInterval(config);
  if (tp.kind === "prime-rl" && ckpt.interval === 0)
    problems.push(
      `trainer_process.max_restarts = ${tp.max_restarts} needs trainer checkpoints, but ${ckpt.key} sets none; ` +
        `set ${ckpt.key} (e.g. 1) or max_restarts = 0 (${config.file})`,
    );
  const { definition, config: trainerConfig } = config.plugins.trainer;
  for (const problem of definition.launch?.restartProblems?.(trainerConfig, launchContext(config)) ?? [])
    problems.push(`${problem} (${config.file})`);
  return problems;
}

/**
 * The checkpoint step a restarted trainer resumes from, through the trainer plugin's `launch.restartStep` hook
 * (prime-rl: the newest checkpoint at or before the newest finished broadcast). Undefined: a fresh start.
 * @example restartResumeStep(config) // 3
 */
export function restartResumeStep(config: RunConfig): number | undefined {
  const { definition, config: trainerConfig } = config.plugins.trainer;
  return definition.launch?.restartStep?.(trainerConfig, launchContext(config));
}

/**
 * The trainer's `[ckpt] interval` as the trainer TOML sets it (generated: `[trainer_process] ckpt_interval`,
 * then `trainer_config`; or the user's `config_file`), with the key that sets it; interval 0 is none.
 * @example trainerCheckpointInterval(config) // { interval: 1, key: "trainer_process.ckpt_interval" }
 */
export function trainerCheckpointInterval(config: RunConfig): { interval: number; key: string } {
  const tp = config.root.trainer_process;
  const read = (doc: unknown) => {
    const v = (doc as { ckpt?: { interval?: unknown } } | undefined)?.ckpt?.interval;
    return typeof v === "number" ? v : undefined;
  };
  if (tp.config_file) {
    const file = resolve(config.dir, tp.config_file);
    const doc = existsSync(file) ? TOML.parse(readFileSync(file, "utf8")) : {};
    return { interval: read(doc) ?? 0, key: `trainer_process.config_file (${file}) [ckpt] interval` };
  }
  const merged = read(tp.trainer_config);
  if (merged !== undefined) return { interval: merged, key: "trainer_process.trainer_config.ckpt.interval" };
  return { interval: tp.ckpt_interval, key: "trainer_process.ckpt_interval" };
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
