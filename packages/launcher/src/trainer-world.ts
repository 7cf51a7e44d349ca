import type { ProcessContext, ProcessKind, TrainerWorld } from "@air/core";
import type { RunConfig } from "./sections.ts";

/**
 * The trainer's ranks and data-parallel size, as prime-rl's `rl` derives `orchestrator.num_train_workers`
 * (`num_train_gpus // cp` on one node, `num_train_nodes * gpus_per_node // cp` on several), from what the
 * launcher starts: the ranks per node the trainer process kind starts for its GPUs (`ranks`; torchrun: one per GPU)
 * on each of `nnodes` nodes; the context parallel size as the kind reads it from its config (`contextParallel`).
 * Reads the planned trainer process only (its kind and context: the GPUs, `[trainer_process]`).
 * @example trainerWorld(kind, processContext(config)) // { ranksPerNode: 5, nnodes: 1, cp: 1, dataWorldSize: 5, ... }
 */
export function trainerWorld(kind: ProcessKind, ctx: ProcessContext): TrainerWorld {
  const { nnodes, master_addr: masterAddr } = ctx.trainerProcess;
  const { count: gpus, key: gpuKey } = ctx.gpus;
  const ranksPerNode = kind.ranks?.(ctx, gpus).perNode ?? Math.max(1, gpus);
  const { cp, key: cpKey } = kind.contextParallel?.(ctx) ?? { cp: 1, key: "trainer_process.kind" };
  const dataWorldSize = Math.floor((ranksPerNode * nnodes) / cp);
  return { ranksPerNode, nnodes, cp, dataWorldSize, gpuKey, cpKey, masterAddr };
}

/**
 * The `[trainer]` values that follow from how the trainer is launched (the trainer plugin's `launch.derive` hook;
 * prime-rl: `data_world_size`, `pad_to_multiple_of`, `cp` and, with several nodes, `zmq_host`), as a new settings
 * object with them filled in (so `rl validate` prints them and the plugin packs one micro-batch list per rank), and
 * the problems of a config whose ranks, nodes and transport cannot work together, each naming the TOML keys (an
 * explicit value that contradicts the derived one names both). The config is not changed.
 * @example deriveTrainer(config, trainerWorld(kind, ctx)).settings.data_world_size // 5
 */
export function deriveTrainer(
  config: RunConfig,
  world: TrainerWorld | undefined,
): { settings: RunConfig["plugins"]["trainer"]["config"]; problems: string[] } {
  const given = config.plugins.trainer.config;
  const derive = config.plugins.trainer.definition.launch?.derive;
  if (!world || !derive) return { settings: given, problems: [] };
  const settings: Record<string, unknown> = { ...(typeof given === "object" && given !== null ? given : {}) };
  const problems: string[] = [];
  const ranks = `${world.ranksPerNode} rank(s) per node × trainer_process.nnodes = ${world.nnodes}`;
  if (!Number.isInteger(world.cp) || world.cp < 1 || (world.ranksPerNode * world.nnodes) % world.cp !== 0)
    problems.push(
      `${world.cpKey} = ${world.cp} must divide the trainer's world size (${ranks} from ${world.gpuKey})`,
    );
  for (const [key, { value, why }] of Object.entries(derive(given, world))) {
    const explicit = settings[key];
    if (explicit !== undefined && explicit !== value)
      problems.push(
        `trainer.${key} = ${JSON.stringify(explicit)} contradicts ${JSON.stringify(value)} (${why}); remove trainer.${key}`,
      );
    else settings[key] = value;
  }
  return { settings, problems };
}
