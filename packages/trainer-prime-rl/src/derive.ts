import type { TrainerWorld } from "@air/core";
import type { PrimeRlConfig } from "./options.ts";

/**
 * The plugin's values that follow from the trainer processes the launcher starts, as prime-rl's `rl` derives
 * them: `data_world_size` (num_train_workers), `pad_to_multiple_of` (= cp) and, with several trainer nodes,
 * `zmq_host` (= `master_addr`, where the ranks of every node can reach the orchestrator's sockets). The plugin's
 * `launch.derive` hook.
 * @example derive(config, world).data_world_size.value // 5
 */
export function derive(
  _config: PrimeRlConfig,
  world: TrainerWorld,
): Record<string, { value: unknown; why: string }> {
  const ranks = `${world.ranksPerNode} rank(s) per node × trainer_process.nnodes = ${world.nnodes}`;
  const derived: Record<string, { value: unknown; why: string }> = {
    data_world_size: {
      value: world.dataWorldSize,
      why: `${ranks} ÷ ${world.cpKey} = ${world.cp}, from ${world.gpuKey}`,
    },
    pad_to_multiple_of: { value: world.cp, why: `the trainer's context parallel degree, ${world.cpKey}` },
  };
  if (world.nnodes > 1)
    derived.zmq_host = {
      value: world.masterAddr,
      why: "trainer_process.master_addr: the trainer ranks on every node connect there",
    };
  return derived;
}
