import type { ProcessContext } from "@air/core";
import { z } from "zod";

/**
 * prime-rl's own keys of `[trainer_process]` (`kind = "prime-rl"`), beside the launcher's generic ones (kind,
 * command, env, extra_args, nodes, restarts): the launcher builds its schema from this, and the process kind's
 * context carries it typed (`ProcessContext<PrimeRlTrainerSection>`).
 */
export const primeRlTrainerSection = z
  .object({
    launch: z
      .enum(["torchrun", "entrypoint"])
      .default("torchrun")
      .describe("prime-rl: torchrun -m prime_rl.trainer.rl.train, or prime-rl's `trainer` entrypoint"),
    module: z
      .string()
      .default("prime_rl.trainer.rl.train")
      .describe(
        "launch = torchrun: the module torchrun runs (`-m`); air_tiny.trainer is the CPU stand-in (PYTHONPATH packages/tiny/py)",
      ),
    config_file: z
      .string()
      .optional()
      .describe(
        "prime-rl trainer TOML to use as is (relative to the config file); resuming runs a copy with the resume step ([resume] step; 0.8: [ckpt] resume_step) under <run dir>/configs/; default: generated",
      ),
    lr: z
      .number()
      .min(0)
      .default(1e-5)
      .describe("prime-rl trainer learning rate ([optim] lr; 0 keeps the weights: a control run)"),
    seq_len: z
      .unknown()
      .refine((v) => v === undefined, {
        message:
          "set [trainer] seq_len instead: one value is both the packing bin size and the trainer's [model] seq_len",
      })
      .optional()
      .describe("not a key: the trainer's [model] seq_len is [trainer] seq_len (derived, one source)"),
    weight_decay: z.number().min(0).optional().describe("prime-rl trainer [optim] weight_decay"),
    max_norm: z.number().positive().nullable().optional().describe("gradient clipping; null disables it"),
    trainer_config: z
      .record(z.string(), z.unknown())
      .default({})
      .describe("extra values for the generated prime-rl trainer TOML"),
    ckpt_interval: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        "prime-rl trainer [ckpt] interval: a resumable checkpoint (fp32 weights + optimizer state, `rl check` estimates its size) every this many steps, for --resume and max_restarts (a restarted trainer trains the batches after its checkpoint again); 0: none",
      ),
    ckpt_keep_last: z
      .number()
      .int()
      .min(1)
      .default(2)
      .describe("prime-rl trainer [ckpt] keep_last: checkpoints kept on disk (older ones are removed)"),
  })
  .strict();

const loraSection = z
  .object({
    enabled: z.boolean().default(false).describe("serve LoRA adapters (vLLM --enable-lora)"),
    max_rank: z.number().int().positive().default(32).describe("vLLM --max-lora-rank"),
    max_loras: z.number().int().positive().default(1).describe("vLLM --max-loras"),
    modules: z
      .record(z.string(), z.string())
      .default({})
      .describe("adapters loaded at start, name = path (vLLM --lora-modules name=path)"),
  })
  .strict()
  .prefault({});

/** The vLLM engine's keys of `[inference]`, shared by stock `vllm serve` and prime-rl's server. */
const vllmKeys = {
  model: z.string().optional().describe("model to serve (default: [model] name)"),
  served_model_name: z.string().optional().describe("name the server reports (vLLM --served-model-name)"),
  max_model_len: z.number().int().positive().optional().describe("default: [model] max_model_len"),
  gpu_memory_utilization: z.number().gt(0).max(1).default(0.9),
  tensor_parallel_size: z.number().int().positive().optional().describe("default: number of inference GPUs"),
  dtype: z.string().optional(),
  lora: loraSection,
};

/** Stock vLLM's own keys of `[inference]` (`kind = "vllm"`). */
export const vllmServerSection = z.object(vllmKeys).strict();

/** prime-rl's server's own keys of `[inference]` (`kind = "prime-rl"`): vLLM's, and its router. */
export const primeRlServerSection = z
  .object({
    ...vllmKeys,
    router: z
      .boolean()
      .default(false)
      .describe(
        "run prime-rl's vllm-router on `port` with the engine on `backend_port` (prime-rl's default); the policy's admin calls then go to the engine ([policy] admin_url, derived). false: router = \"None\", the engine on `port`",
      ),
    backend_port: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .optional()
      .describe("the engine's port behind the router (prime-rl's backend_port; default: port + 100)"),
  })
  .strict();

export type PrimeRlTrainerSection = z.output<typeof primeRlTrainerSection>;
export type VllmServerSection = z.output<typeof vllmServerSection>;
export type PrimeRlServerSection = z.output<typeof primeRlServerSection>;

/**
 * A context with its section parsed as prime-rl's trainer keys (e.g. one the launcher built for
 * `[trainer_process]`, whose kind's keys it hands over as its schema output them).
 * @example primeRlTrainerToml(primeRlTrainerContext(ctx))
 */
export function primeRlTrainerContext<C extends ProcessContext>(
  ctx: C,
): Omit<C, "section"> & { section: PrimeRlTrainerSection } {
  return { ...ctx, section: primeRlTrainerSection.parse(ctx.section) };
}
