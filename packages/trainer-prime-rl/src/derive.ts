import type { TrainerWorld } from "@air/core";
import type { PrimeRlConfig } from "./options.ts";

/**
 * The plugin's values that follow from the trainer processes the launcher starts, as prime-rl's `rl` derives
 * them: `data_world_size` (num_train_workers), `pad_to_multiple_of` and `cp` (= the trainer's cp) and, with several trainer nodes,
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
    cp: {
      value: world.cp,
      why: `the trainer's context parallel degree, ${world.cpKey}: the readers of each ZMQ topic`,
    },
  };
  if (world.nnodes > 1)
    derived.zmq_host = {
      value: world.masterAddr,
      why: "trainer_process.master_addr: the trainer ranks on every node connect there",
    };
  return derived;
}

/** prime-rl's `[model] seq_len` when nothing sets it (`ModelConfig.seq_len`'s default is 2048; the trainer TOML air writes has always set 4096). */
export const DEFAULT_SEQ_LEN = 4096;

/**
 * The one seq_len of a run, as prime-rl's `rl` shares one between orchestrator and trainer: the packing bin size
 * (no micro-batch is longer) and the trainer's `[model] seq_len`. `[trainer] seq_len`, else `max_sample_tokens`,
 * else `[model] max_model_len`, else 4096.
 * @example seqLen({ seq_len: undefined, max_sample_tokens: 8192 }, 32768) // { value: 8192, key: "trainer.max_sample_tokens" }
 */
export function seqLen(
  config: Pick<PrimeRlConfig, "seq_len" | "max_sample_tokens">,
  maxModelLen: number | undefined,
): { value: number; key: string } {
  if (config.seq_len !== undefined) return { value: config.seq_len, key: "trainer.seq_len" };
  if (config.max_sample_tokens !== undefined)
    return { value: config.max_sample_tokens, key: "trainer.max_sample_tokens" };
  if (maxModelLen !== undefined) return { value: maxModelLen, key: "model.max_model_len" };
  return { value: DEFAULT_SEQ_LEN, key: "trainer.seq_len (default)" };
}
