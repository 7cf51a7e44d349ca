import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import TOML from "@iarna/toml";
import type { RunConfig } from "./sections.ts";

/** The prime-rl trainer's process layout as the launcher starts it, and what prime-rl's `rl` derives from it. */
export interface PrimeRlWorld {
  /** torchrun `--nproc-per-node`: one rank per trainer GPU (1 without GPUs, or for `launch = "entrypoint"`). */
  ranksPerNode: number;
  nnodes: number;
  /** The trainer's `[model] cp` (context parallel), the only non-data-parallel dimension of prime-rl's trainer. */
  cp: number;
  /** `num_train_workers`: ranksPerNode × nnodes ÷ cp (`configs/rl.py` `auto_setup_deployment`). */
  dataWorldSize: number;
  /** The TOML key that sets the trainer GPUs, for messages. */
  gpuKey: string;
  /** The TOML key that sets cp, for messages. */
  cpKey: string;
}

function trainerModelCp(config: RunConfig): { cp: number; key: string } {
  const tp = config.root.trainer_process;
  if (tp.config_file) {
    const file = resolve(config.dir, tp.config_file);
    const key = `trainer_process.config_file (${file}) [model] cp`;
    if (!existsSync(file)) return { cp: 1, key };
    const doc = TOML.parse(readFileSync(file, "utf8")) as { model?: { cp?: unknown } };
    return { cp: typeof doc.model?.cp === "number" ? doc.model.cp : 1, key };
  }
  const model = tp.trainer_config.model as { cp?: unknown } | undefined;
  return { cp: typeof model?.cp === "number" ? model.cp : 1, key: "trainer_process.trainer_config.model.cp" };
}

/**
 * The trainer's ranks and data-parallel size, as prime-rl's `rl` derives `orchestrator.num_train_workers`
 * (`num_train_gpus // cp` on one node, `num_train_nodes * gpus_per_node // cp` on several), from what the
 * launcher starts: torchrun with one rank per trainer GPU on each of `nnodes` nodes. Undefined unless the
 * launcher starts prime-rl's trainer for the prime-rl transport plugin.
 * @example primeRlWorld(config) // { ranksPerNode: 5, nnodes: 1, cp: 1, dataWorldSize: 5, ... }
 */
export function primeRlWorld(config: RunConfig): PrimeRlWorld | undefined {
  const { trainer_process: tp, deployment: d } = config.root;
  if (config.plugins.trainer.spec !== "prime-rl" || tp.kind !== "prime-rl") return undefined;
  const gpus = d.trainer_gpu_ids.length > 0 ? d.trainer_gpu_ids.length : (d.num_train_gpus ?? 0);
  const gpuKey = d.trainer_gpu_ids.length > 0 ? "deployment.trainer_gpu_ids" : "deployment.num_train_gpus";
  const ranksPerNode = tp.launch === "entrypoint" ? 1 : Math.max(1, gpus);
  const { cp, key: cpKey } = trainerModelCp(config);
  const world = ranksPerNode * tp.nnodes;
  return { ranksPerNode, nnodes: tp.nnodes, cp, dataWorldSize: Math.floor(world / cp), gpuKey, cpKey };
}

/**
 * Fills in the `[trainer]` (prime-rl plugin) values that follow from how the trainer is launched, as prime-rl's
 * `rl` does — `data_world_size` (num_train_workers), `pad_to_multiple_of` (= cp) and, with several trainer nodes,
 * `zmq_host` (= `master_addr`, where the ranks of every node can reach the orchestrator's sockets) — and returns
 * the problems of a config whose ranks, nodes and transport cannot work together, each naming the TOML keys
 * (an explicit value that contradicts the derived one names both). Mutates `config.plugins.trainer.config`, so
 * `rl validate` prints the resolved values and the plugin packs one micro-batch list per rank.
 * @example const problems = resolvePrimeRlWorld(config); // [] and config.plugins.trainer.config.data_world_size === 5
 */
export function resolvePrimeRlWorld(config: RunConfig): string[] {
  const world = primeRlWorld(config);
  if (!world) return [];
  const tp = config.root.trainer_process;
  const settings = config.plugins.trainer.config as Record<string, unknown>;
  const at = ` (${config.file})`;
  const problems: string[] = [];
  const ranks = `${world.ranksPerNode} rank(s) per node × trainer_process.nnodes = ${world.nnodes}`;
  if (tp.launch === "entrypoint" && tp.nnodes > 1)
    problems.push(
      `trainer_process.launch: "entrypoint" starts one trainer process, which cannot span trainer_process.nnodes = ${tp.nnodes}; use launch = "torchrun"${at}`,
    );
  if (!Number.isInteger(world.cp) || world.cp < 1 || (world.ranksPerNode * world.nnodes) % world.cp !== 0)
    problems.push(
      `${world.cpKey} = ${world.cp} must divide the trainer's world size (${ranks} from ${world.gpuKey})${at}`,
    );
  const derived: Record<string, unknown> = {
    data_world_size: world.dataWorldSize,
    pad_to_multiple_of: world.cp,
  };
  const why: Record<string, string> = {
    data_world_size: `${ranks} ÷ ${world.cpKey} = ${world.cp}, from ${world.gpuKey}`,
    pad_to_multiple_of: `the trainer's context parallel degree, ${world.cpKey}`,
  };
  if (tp.nnodes > 1) {
    derived.zmq_host = tp.master_addr;
    why.zmq_host = `trainer_process.master_addr: the trainer ranks on every node connect there`;
  }
  for (const [key, value] of Object.entries(derived)) {
    const given = settings[key];
    if (given !== undefined && given !== value)
      problems.push(
        `trainer.${key} = ${JSON.stringify(given)} contradicts ${JSON.stringify(value)} (${why[key]}); remove trainer.${key}${at}`,
      );
    else settings[key] = value;
  }
  return problems;
}

/**
 * Inference GPUs that prime-rl's server cannot split: with `[inference] tensor_parallel_size` set, the inference
 * GPUs must be a multiple of it (prime-rl's `rl`: "Number of inference GPUs must be divisible by the tensor
 * parallel size"; the remainder would sit idle or vLLM would refuse).
 * @example inferenceParallelProblems(config) // ["inference.tensor_parallel_size = 4 must divide ..."]
 */
export function inferenceParallelProblems(config: RunConfig): string[] {
  const { inference: inf, deployment: d } = config.root;
  if (inf.kind === "external" || inf.tensor_parallel_size === undefined) return [];
  const gpus = d.inference_gpu_ids.length > 0 ? d.inference_gpu_ids.length : (d.num_infer_gpus ?? 0);
  const key = d.inference_gpu_ids.length > 0 ? "deployment.inference_gpu_ids" : "deployment.num_infer_gpus";
  if (gpus === 0 || gpus % inf.tensor_parallel_size === 0) return [];
  return [
    `inference.tensor_parallel_size = ${inf.tensor_parallel_size} must divide the ${gpus} inference GPU(s) of ${key} (${config.file})`,
  ];
}
