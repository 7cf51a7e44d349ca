import type { ProcessContext, ProcessKind, TrainerWorld } from "@air/core";
import { pluginNeeds } from "./plugin-needs.ts";
import { inferenceKind, processContext, trainerKind } from "./process-kinds.ts";
import type { RunConfig } from "./sections.ts";
import { restartProblems } from "./trainer-restart.ts";
import { deriveTrainer, trainerWorld } from "./trainer-world.ts";
import { engineBaseUrl, inferenceBaseUrl } from "./urls.ts";

/** A process the launcher starts: its kind and the context the kind reads. */
export interface PlannedProcess {
  readonly kind: ProcessKind;
  readonly ctx: ProcessContext;
}

/**
 * A run as the launcher will start it, derived once from the user's config (Terraform's plan): every later part
 * (validate, preflight, supervise, teardown) reads it and never writes back.
 */
export interface RunPlan {
  /** The config with the derived values filled in: a new object (the trainer's world, the policy's admin URLs). */
  readonly config: RunConfig;
  /** What the plugins ask of the launcher (`launch.needs`), merged; asked once. */
  readonly needs: ReturnType<typeof pluginNeeds>;
  readonly trainer?: PlannedProcess;
  readonly inference?: PlannedProcess;
  /** The server's base URL and where its admin routes go (the engine behind a router). */
  readonly urls: { readonly inference: string; readonly engine: string };
  /** The trainer's ranks, as the launcher starts them (undefined without a trainer plugin that derives). */
  readonly world?: TrainerWorld;
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
 * Reads a loaded config once and returns the run's plan: the plugins' needs, the process kinds and their contexts,
 * the server's URLs, the trainer's world, the derived values as a new config, and the problems. The config given
 * is not changed.
 * @example const plan = planRun(loaded); plan.config.plugins.trainer.config.data_world_size // 5
 */
export function planRun(loaded: RunConfig): RunPlan {
  const needs = pluginNeeds(loaded);
  const at = ` (${loaded.file})`;
  const world = trainerWorld(loaded);
  const derived = deriveTrainer(loaded, world);
  const urls = { inference: inferenceBaseUrl(loaded), engine: engineBaseUrl(loaded) };
  const server = inferenceKind(loaded);
  const serverCtx = server && processContext(loaded, "inference", needs.weightUpdate);
  const routed = routedPolicy(loaded, urls, serverCtx && server.enginePort?.(serverCtx));
  const config: RunConfig = {
    ...loaded,
    plugins: {
      ...loaded.plugins,
      trainer: { ...loaded.plugins.trainer, config: derived.settings },
      policy: routed.policy,
    },
  };
  const trainer = trainerKind(config);
  const problems = [
    ...derived.problems.map((p) => `${p}${at}`),
    ...routed.problems.map((p) => `${p}${at}`),
    ...((serverCtx && server?.problems?.(serverCtx)) ?? []).map((p) => `${p}${at}`),
    ...restartProblems(config),
  ];
  return Object.freeze({
    config,
    needs,
    trainer: trainer && { kind: trainer, ctx: processContext(config) },
    inference: server && serverCtx && { kind: server, ctx: serverCtx },
    urls,
    world,
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
