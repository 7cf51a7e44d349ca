import { z } from "zod";

/**
 * The test kit's flat description of a tiny setup; `writeTinyConfig` turns it into what the stand-ins read: a
 * model directory (`config.json`, model_type "air-tiny") and prime-rl's inference and trainer TOMLs (0.9
 * layout). Model defaults match `py/air_tiny/model.py` MODEL_DEFAULTS; trainer defaults are the kit's (prime-rl's
 * own are lr 1e-6, weight_decay 0.01). Server and trainer get the same model directory, so the same weights.
 * @example tinyConfigSchema.parse({ commands: ["python train.py", "validate", "submit"], run_dir: "/out/prime-rl/run_default" })
 */
const tinyFields = z
  .object({
    host: z.string().default("127.0.0.1").describe("server bind address"),
    port: z.number().int().min(0).max(65535).default(8000).describe("server port; 0 picks a free one"),
    model_name: z.string().default("tiny").describe("model id served on /v1/models (vllm.served_model_name)"),
    seed: z
      .number()
      .int()
      .default(0)
      .describe("seeds the initial weights (config.json) and the server's sampler (vllm.seed)"),
    commands: z
      .array(z.string().min(1))
      .min(1)
      .describe("the output vocabulary: whole commands, each one token (plus EOS)"),
    context_tokens: z
      .number()
      .int()
      .positive()
      .default(64)
      .describe("the model reads the last N prompt tokens"),
    d_model: z.number().int().positive().default(32).describe("width of the transformer"),
    layers: z.number().int().positive().default(1).describe("transformer blocks"),
    heads: z.number().int().positive().default(2).describe("attention heads (must divide d_model)"),
    lr: z
      .number()
      .min(0)
      .default(0.01)
      .describe("AdamW learning rate (trainer); 0 keeps the weights (a control run)"),
    weight_decay: z.number().min(0).default(0).describe("AdamW weight decay (trainer)"),
    max_norm: z
      .number()
      .positive()
      .nullable()
      .default(1)
      .describe("gradient clipping; null disables (trainer)"),
    dppo_mask_low: z
      .number()
      .min(0)
      .default(0.2)
      .describe("prime-rl default loss: lower DPPO mask threshold"),
    dppo_mask_high: z
      .number()
      .min(0)
      .default(0.2)
      .describe("prime-rl default loss: upper DPPO mask threshold"),
    adv_tau: z.number().min(0).default(1).describe("prime-rl default loss: advantage scale"),
    kl_tau: z.number().min(0).default(0.001).describe("prime-rl default loss: squared log-ratio weight"),
    max_model_len: z
      .number()
      .int()
      .positive()
      .default(32768)
      .describe("reported by /v1/models and /tokenize"),
    poll_ms: z
      .number()
      .int()
      .positive()
      .default(100)
      .describe("trainer: how often to look for the next batch (AIR_TINY_POLL_S)"),
    max_steps: z.number().int().positive().nullable().default(null).describe("trainer: exit after this step"),
    prime_rl_version: z
      .enum(["0.8", "0.9"])
      .default("0.9")
      .describe("trainer TOML layout: 0.9 (run_dir is output_dir) or 0.8 (run_dir is <output_dir>/run_*)"),
    run_dir: z
      .string()
      .nullable()
      .default(null)
      .describe(
        "trainer: the dir with rollouts/ and broadcasts/ (0.9: output_dir; 0.8: <output_dir>/run_default)",
      ),
    metrics_file: z
      .string()
      .nullable()
      .default(null)
      .describe(
        "trainer: step metrics JSONL (monitors.file.path; default <run_dir>/metrics.jsonl, where prime-rl 0.9 writes it)",
      ),
    lora: z
      .object({ rank: z.number().int().positive(), alpha: z.number().min(0) })
      .strict()
      .nullable()
      .default(null)
      .describe(
        "trainer: [model.lora] (train a LoRA adapter, broadcast the adapter only); server: vllm.enable_lora, max_lora_rank = rank",
      ),
    discussion: z
      .string()
      .default("Next I run this command.")
      .describe("the DISCUSSION line written before each command"),
  })
  .strict();

export const tinyConfigSchema = tinyFields.refine((c) => c.d_model % c.heads === 0, {
  message: "d_model must be a multiple of heads",
  path: ["heads"],
});

export type TinyConfig = z.output<typeof tinyConfigSchema>;
export type TinyConfigInput = z.input<typeof tinyConfigSchema>;
