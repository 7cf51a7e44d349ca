import { z } from "zod";
import { NEWEST_PRIME_RL, PRIME_RL_VERSIONS } from "./codecs/index.ts";

/**
 * The `[trainer]` section of the prime-rl plugin.
 * @example primeRlConfigSchema.parse({ env_name: "mlgym", max_sample_tokens: 8192 })
 */
export const primeRlConfigSchema = z
  .object({
    prime_rl_version: z
      // `--trainer.prime_rl_version 0.8` and a bare TOML `0.9` arrive as numbers: take them as the version typed
      .preprocess((v) => (typeof v === "number" ? String(v) : v), z.enum(PRIME_RL_VERSIONS))
      .default(NEWEST_PRIME_RL)
      .describe(
        "prime-rl release the trainer runs: 0.8 (TrainingBatch files, run_* dirs) or 0.9 (MicroBatch per rank, file or ZMQ)",
      ),
    transport: z
      .enum(["filesystem", "zmq"])
      .default("filesystem")
      .describe(
        "how batches reach the trainer (prime-rl's rollout_transport; zmq needs prime_rl_version 0.9)",
      ),
    zmq_host: z
      .string()
      .optional()
      .describe(
        "ZMQ transport host: air binds it, every trainer rank connects to it (default: localhost; with several trainer nodes the launcher sets [trainer_process] master_addr)",
      ),
    zmq_port: z
      .number()
      .int()
      .min(1)
      .max(65534)
      .default(5555)
      .describe("ZMQ data port; the READY barrier listens on port + 1 (prime-rl's default: 5555)"),
    zmq_ready_timeout_ms: z
      .number()
      .int()
      .positive()
      .default(1_800_000)
      .describe("how long the first batch waits for every trainer rank to subscribe and send READY"),
    data_world_size: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "0.9: the trainer's data-parallel ranks (num_train_workers), one micro-batch list per rank; the launcher derives it as prime-rl's rl does (trainer GPUs per node × nnodes ÷ model.cp); default without a launched trainer: 1",
      ),
    cp: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "the trainer's context parallel degree (its [model] cp; the launcher derives it): with ZMQ, each data rank's topic has this many readers, and all of them must be subscribed before a step is published (default: 1)",
      ),
    seq_len: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "0.9: the trainer's [model] seq_len and the packing bin size, one value (default: max_sample_tokens, else [model] max_model_len, else 4096); the launcher writes it into the trainer TOML",
      ),
    pad_to_multiple_of: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "0.9: pad each micro batch to a multiple of this; the launcher derives it from the trainer's model.cp as prime-rl's rl does; default without a launched trainer: 1",
      ),
    output_dir: z
      .string()
      .optional()
      .describe("the prime-rl trainer's output_dir (default: <run dir>/prime-rl); relative to the TOML file"),
    run_name: z
      .string()
      .regex(/^run_[A-Za-z0-9._-]+$/, "prime-rl's multi-run manager only trains run_* directories")
      .default("run_default")
      .describe("0.8: the orchestrator's run directory under output_dir (prime-rl's default: run_default)"),
    run_dir: z.string().optional().describe("full path of the run directory; overrides output_dir/run_name"),
    metrics_file: z
      .string()
      .optional()
      .describe(
        "JSONL of trainer step metrics (default: <output_dir>/metrics.jsonl, prime-rl's [file_monitor])",
      ),
    poll_ms: z
      .number()
      .int()
      .positive()
      .default(500)
      .describe("how often to look for STABLE (prime-rl: 1000)"),
    weights_timeout_ms: z
      .number()
      .int()
      .positive()
      .default(3_600_000)
      .describe("give up waiting for one step's weights after this long"),
    metrics_wait_ms: z
      .number()
      .int()
      .min(0)
      .default(1_800_000)
      .describe(
        "after STABLE, wait at most this long for the step's metrics row (prime-rl logs it after the checkpoint save that follows STABLE); the wait also ends when the next step's STABLE appears",
      ),
    keep_broadcasts: z
      .number()
      .int()
      .min(2)
      .default(2)
      .describe(
        "after each step's weights arrive, keep this many newest broadcasts/step_* (prime-rl's trainer keeps 2) and remove the batches at or before the oldest checkpoint: disk use stays bounded",
      ),
    prune: z
      .boolean()
      .default(true)
      .describe("remove old broadcasts and batches as keep_broadcasts says; false keeps every step"),
    env_name: z.string().default("air").describe("TrainingSample.env_name: per-env metrics in the trainer"),
    lora: z.boolean().default(false).describe("the trainer broadcasts LoRA adapters instead of full weights"),
    lora_rank: z.number().int().positive().default(16).describe("LoRA rank written to control/orch.toml"),
    lora_alpha: z.number().positive().default(32).describe("LoRA alpha written to control/orch.toml"),
    step_offset: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe("prime-rl step = air step + step_offset (prime-rl v0.8.0 counts steps from 1)"),
    write_control: z
      .boolean()
      .default(true)
      .describe(
        "0.8: write <run_dir>/control/orch.toml, without which prime-rl's trainer ignores the run dir",
      ),
    max_sample_tokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("the trainer's seq_len: a longer sample would get the run evicted, so submit refuses it"),
  })
  .strict()
  .refine((c) => c.transport === "filesystem" || c.prime_rl_version !== "0.8", {
    message: 'prime-rl 0.8 is driven over the filesystem transport here (transport = "filesystem")',
  });

export type PrimeRlConfig = z.output<typeof primeRlConfigSchema>;
