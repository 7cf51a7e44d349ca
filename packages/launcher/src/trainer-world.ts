import type { TrainerWorld } from "@air/core";
import { processContext, trainerKind } from "./process-kinds.ts";
import type { RunConfig } from "./sections.ts";

/**
 * The trainer's ranks and data-parallel size, as prime-rl's `rl` derives `orchestrator.num_train_workers`
 * (`num_train_gpus // cp` on one node, `num_train_nodes * gpus_per_node // cp` on several), from what the
 * launcher starts: the ranks per node the trainer process kind starts for its GPUs (`ranks`; torchrun: one per GPU)
 * on each of `nnodes` nodes; the context parallel size as the kind reads it from its config (`contextParallel`). Undefined unless the launcher starts
 * a trainer process for a trainer plugin that derives settings from it (`launch.derive`).
 * @example trainerWorld(config) // { ranksPerNode: 5, nnodes: 1, cp: 1, dataWorldSize: 5, ... }
 */
export function trainerWorld(config: RunConfig): TrainerWorld | undefined {
  const { trainer_process: tp, deployment: d } = config.root;
  const kind = trainerKind(config);
  if (!config.plugins.trainer.definition.launch?.derive || !kind) return undefined;
  const gpus = d.trainer_gpu_ids.length > 0 ? d.trainer_gpu_ids.length : (d.num_train_gpus ?? 0);
  const gpuKey = d.trainer_gpu_ids.length > 0 ? "deployment.trainer_gpu_ids" : "deployment.num_train_gpus";
  const ctx = processContext(config);
  const ranksPerNode = kind.ranks?.(ctx, gpus).perNode ?? Math.max(1, gpus);
  const { cp, key: cpKey } = kind.contextParallel?.(ctx) ?? {
    cp: 1,
    key: "trainer_process.kind",
  };
  const world = ranksPerNode * tp.nnodes;
  const dataWorldSize = Math.floor(world / cp);
  return { ranksPerNode, nnodes: tp.nnodes, cp, dataWorldSize, gpuKey, cpKey, masterAddr: tp.master_addr };
}

/**
 * Fills in the `[trainer]` values that follow from how the trainer is launched (the trainer plugin's
 * `launch.derive` hook; prime-rl: `data_world_size`, `pad_to_multiple_of` and, with several nodes, `zmq_host`)
 * and returns the problems of a config whose ranks, nodes and transport cannot work together, each naming the
 * TOML keys (an explicit value that contradicts the derived one names both). Mutates
 * `config.plugins.trainer.config`, so `rl validate` prints the resolved values and the plugin packs one
 * micro-batch list per rank.
 * @example const problems = resolveTrainerWorld(config); // [] and config.plugins.trainer.config.data_world_size === 5
 */
export function resolveTrainerWorld(config: RunConfig): string[] {
  const world = trainerWorld(config);
  const derive = config.plugins.trainer.definition.launch?.derive;
  if (!world || !derive) return [];
  const settings = config.plugins.trainer.config as Record<string, unknown>;
  const at = ` (${config.file})`;
  const problems: string[] = [];
  const ranks = `${world.ranksPerNode} rank(s) per node × trainer_process.nnodes = ${world.nnodes}`;
  if (!Number.isInteger(world.cp) || world.cp < 1 || (world.ranksPerNode * world.nnodes) % world.cp !== 0)
    problems.push(
      `${world.cpKey} = ${world.cp} must divide the trainer's world size (${ranks} from ${world.gpuKey})${at}`,
    );
  for (const [key, { value, why }] of Object.entries(derive(settings, world))) {
    const given = settings[key];
    if (given !== undefined && given !== value)
      problems.push(
        `trainer.${key} = ${JSON.stringify(given)} contradicts ${JSON.stringify(value)} (${why}); remove trainer.${key}${at}`,
      );
    else settings[key] = value;
  }
  return problems;
}
