import { join } from "node:path";
import type { LaunchContext, ResolvedPlugin, TrainerWorld } from "@air/core";
import { launchContext } from "./launch-context.ts";
import { allPlugins, pluginNeeds } from "./plugin-needs.ts";
import { type PlannedProcess, plannedProcess } from "./process-kinds.ts";
import type { RunConfig } from "./sections.ts";
import { restartProblems } from "./trainer-restart.ts";
import { deriveTrainer, trainerWorld } from "./trainer-world.ts";
import { serverUrls } from "./urls.ts";

export type { PlannedProcess };

/** A port a process the launcher starts binds: preflight checks it is free. */
export interface PlannedPort {
  readonly what: "inference" | "trainer rendezvous";
  readonly host: string;
  readonly port: number;
}

/**
 * A run as the launcher will start it, derived once from the user's config (Terraform's plan): every later part
 * (validate, preflight, supervise, teardown) reads it and never writes back.
 */
export interface RunPlan {
  /** The config with the derived values filled in: a new object (the trainer's world, the policy's admin URLs). */
  readonly config: RunConfig;
  /** Every plugin section of the derived config, in the config's order (the plugins' launch hooks get these). */
  readonly plugins: readonly ResolvedPlugin[];
  /** What a plugin's launch hooks get (`launch.needs`, `launch.preflight`): the TOML's dir, the run dir, the model. */
  readonly launch: LaunchContext & { readonly modelName: string };
  /** What the plugins ask of the launcher (`launch.needs`), merged; asked once. */
  readonly needs: ReturnType<typeof pluginNeeds>;
  readonly trainer?: PlannedProcess;
  readonly inference?: PlannedProcess;
  /** The server's base URL and where its admin routes go (the engine behind a router). */
  readonly urls: { readonly inference: string; readonly engine: string };
  /** The trainer's ranks, as the launcher starts them (undefined without a trainer plugin that derives). */
  readonly world?: TrainerWorld;
  /** The ports the started processes bind (the server unless external or on a worker; rank 0's rendezvous). */
  readonly ports: readonly PlannedPort[];
  /** A trainer worker node (node_rank > 0): only the trainer runs here. */
  readonly worker: boolean;
  /** Where this launcher keeps its pid file, logs and resolved config (the run dir, or a worker's node dir). */
  readonly stateDir: string;
  /** The run's plugins use docker: sweep its containers at teardown (never on a worker node). */
  readonly usesDocker: boolean;
  /** The config's loggers the orchestrator runs beside the launcher's own step lines (those that print none). */
  readonly loggers: RunConfig["plugins"]["loggers"];
  /** Why this config cannot run, each naming its TOML keys and file (`rl validate` exits 2). */
  readonly problems: readonly string[];
}

/** The policy's admin addresses behind a router (its `launch.routeAdmin` hook, on a copy of its config). */
function routedPolicy(config: RunConfig, urls: RunPlan["urls"], enginePort: number | undefined) {
  const policy = config.plugins.policy;
  const hook = policy.definition.launch?.routeAdmin;
  if (enginePort === undefined || !hook) return { policy, problems: [] };
  const own = structuredClone(policy.config);
  const problems = hook(own, { url: urls.inference, engineUrl: urls.engine });
  return { policy: { ...policy, config: own }, problems };
}

/**
 * This machine's part of the run. A multi-node trainer rank other than 0 is a worker: it runs only its trainer,
 * and keeps its own state (pid file, child logs, resolved config) in `<run dir>/nodes/node_<rank>`, so a worker
 * sharing the output dir (NFS, as the broadcasts need) never overwrites or removes the master's files.
 */
function node(config: RunConfig): { worker: boolean; stateDir: string } {
  const { trainer_process: tp } = config.root;
  const worker = tp.kind !== "none" && tp.nnodes > 1 && tp.node_rank > 0;
  return { worker, stateDir: worker ? join(config.runDir, "nodes", `node_${tp.node_rank}`) : config.runDir };
}

/** The ports the run binds: the server's (unless external, or on a worker node) and rank 0's rendezvous. */
function ports(config: RunConfig, worker: boolean, rendezvous: boolean): PlannedPort[] {
  const { inference, trainer_process: tp } = config.root;
  const out: PlannedPort[] = [];
  if (inference.kind !== "external" && !worker)
    out.push({ what: "inference", host: inference.host, port: inference.port });
  if (rendezvous && tp.node_rank === 0)
    out.push({ what: "trainer rendezvous", host: tp.master_addr, port: tp.master_port });
  return out;
}

/**
 * Reads a loaded config once and returns the run's plan: the plugins' needs, the process kinds and their contexts,
 * the server's URLs and the ports, the trainer's world, where the launcher keeps its state, the loggers, the derived
 * values as a new config, and the problems; the config given is not changed. The GPU ids are planned at launch
 * (`planGpus`: counts need the machine's GPUs, which `rl validate` must not).
 * @example const plan = planRun(loaded); plan.config.plugins.trainer.config.data_world_size // 5
 */
export function planRun(loaded: RunConfig): RunPlan {
  const launch = launchContext(loaded);
  const needs = pluginNeeds(allPlugins(loaded), launch);
  const at = ` (${loaded.file})`;
  // the trainer's world reads the process's GPUs and section, never the trainer plugin's settings it derives
  const ranks = plannedProcess(loaded, "trainer_process");
  const derives = loaded.plugins.trainer.definition.launch?.derive;
  const world = ranks && derives ? trainerWorld(ranks.kind, ranks.ctx) : undefined;
  const derived = deriveTrainer(loaded, world);
  const inference = plannedProcess(loaded, "inference", needs.weightUpdate);
  const enginePort = inference?.kind.enginePort?.(inference.ctx);
  const urls = serverUrls(loaded, enginePort);
  const routed = routedPolicy(loaded, urls, enginePort);
  const config: RunConfig = {
    ...loaded,
    plugins: {
      ...loaded.plugins,
      trainer: { ...loaded.plugins.trainer, config: derived.settings },
      policy: routed.policy,
    },
  };
  const trainer = plannedProcess(config, "trainer_process");
  const { worker, stateDir } = node(loaded);
  const problems = [
    ...derived.problems.map((p) => `${p}${at}`),
    ...routed.problems.map((p) => `${p}${at}`),
    ...(inference?.kind.problems?.(inference.ctx) ?? []).map((p) => `${p}${at}`),
    ...restartProblems(trainer, config.plugins.trainer, launch),
  ];
  return Object.freeze({
    config,
    plugins: allPlugins(config),
    launch,
    needs,
    trainer,
    inference,
    urls,
    world,
    ports: ports(loaded, worker, !!trainer && (trainer.kind.ranks?.(trainer.ctx, 0).rendezvous ?? true)),
    worker,
    stateDir,
    usesDocker: !worker && (needs.dockerImages.length > 0 || (needs.dockerHosts?.length ?? 0) > 0),
    loggers: config.plugins.loggers.filter((p) => !p.definition.launch?.printsStepLines?.(p.config)),
    problems,
  });
}

const plans = new WeakMap<RunConfig, RunPlan>();

/**
 * The plan of a config: the one `planRun` made for it when it came from `resolveConfig` (the plan's own config),
 * else made now. Nothing mutates a config after it is planned, so the plan stays true.
 * @example planOf(await resolveConfig("configs/quickstart.toml", [])).needs.weightUpdate // "full"
 */
export function planOf(config: RunConfig): RunPlan {
  const known = plans.get(config);
  if (known) return known;
  const plan = planRun(config);
  plans.set(config, plan);
  plans.set(plan.config, plan);
  return plan;
}
