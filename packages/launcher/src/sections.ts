import type { ResolvedConfig } from "@air/core";
import { z } from "zod";
import { APP_SECTIONS } from "./builtins.ts";

const gpuIds = z.array(z.number().int().min(0));

/** `[deployment]`: which GPUs each part of the run gets. Lists must be disjoint. */
export const deploymentSection = z
  .object({
    device: z
      .enum(["cuda", "cpu"])
      .default("cuda")
      .describe(
        'cpu: the GPU ids only count processes (N trainer "GPUs" = N torchrun ranks on CPU); no CUDA_VISIBLE_DEVICES, no nvidia-smi preflight (for the CPU stand-ins, e.g. in CI)',
      ),
    inference_gpu_ids: gpuIds.default([]).describe("physical GPU ids for the inference server"),
    trainer_gpu_ids: gpuIds.default([]).describe("physical GPU ids for the trainer"),
    env_gpu_ids: gpuIds.default([]).describe("physical GPU ids handed to task containers"),
    num_infer_gpus: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("take this many visible GPUs in order for inference (like prime-rl); instead of the id list"),
    num_train_gpus: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("take this many visible GPUs, after the inference ones, for the trainer"),
    min_free_memory_fraction: z
      .number()
      .min(0)
      .max(1)
      .default(0.9)
      .describe("preflight: share of each trainer GPU's memory that must be free"),
  })
  .strict()
  .superRefine((d, ctx) => {
    const lists = {
      inference_gpu_ids: d.inference_gpu_ids,
      trainer_gpu_ids: d.trainer_gpu_ids,
      env_gpu_ids: d.env_gpu_ids,
    };
    const owner = new Map<number, string>();
    for (const [key, ids] of Object.entries(lists)) {
      for (const id of ids) {
        const prev = owner.get(id);
        if (prev && prev !== key) {
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: `GPU ${id} is also in ${prev}; the GPU lists must be disjoint`,
          });
        } else if (prev === key) {
          ctx.addIssue({ code: "custom", path: [key], message: `GPU ${id} is listed twice` });
        }
        owner.set(id, key);
      }
    }
    if (d.num_infer_gpus !== undefined && d.inference_gpu_ids.length > 0)
      ctx.addIssue({
        code: "custom",
        path: ["num_infer_gpus"],
        message: "give either num_infer_gpus or inference_gpu_ids, not both",
      });
    if (d.num_train_gpus !== undefined && d.trainer_gpu_ids.length > 0)
      ctx.addIssue({
        code: "custom",
        path: ["num_train_gpus"],
        message: "give either num_train_gpus or trainer_gpu_ids, not both",
      });
  })
  .prefault({});

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

/** `[inference]`: the server the policy talks to, started by the launcher unless `kind = "external"`. */
export const inferenceSection = z
  .object({
    kind: z
      .enum(["vllm", "prime-rl", "external"])
      .default("external")
      .describe(
        "vllm serve, prime-rl's inference entrypoint (or a drop-in such as packages/tiny/bin/inference via command), or a URL already up",
      ),
    host: z.string().default("127.0.0.1").describe("address the server binds to"),
    port: z.number().int().min(1).max(65535).default(8000),
    url: z.string().optional().describe("base URL for kind = external, e.g. http://127.0.0.1:8000"),
    router: z
      .boolean()
      .default(false)
      .describe(
        'kind = "prime-rl": run prime-rl\'s vllm-router on `port` with the engine on `backend_port` (prime-rl\'s default); the policy\'s admin calls then go to the engine ([policy] admin_url, derived). false: router = "None", the engine on `port`',
      ),
    backend_port: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .optional()
      .describe("the engine's port behind the router (prime-rl's backend_port; default: port + 100)"),
    model: z.string().optional().describe("model to serve (default: [model] name)"),
    served_model_name: z.string().optional().describe("name the server reports (vLLM --served-model-name)"),
    max_model_len: z.number().int().positive().optional().describe("default: [model] max_model_len"),
    gpu_memory_utilization: z.number().gt(0).max(1).default(0.9),
    tensor_parallel_size: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("default: number of inference GPUs"),
    dtype: z.string().optional(),
    lora: loraSection,
    command: z
      .array(z.string())
      .optional()
      .describe(
        'program (and leading args) to run instead of `vllm` / `inference`, e.g. ["uv", "run", "inference"]; "./…" and "../…" are relative to the TOML file',
      ),
    extra_args: z.array(z.string()).default([]).describe("appended to the server command"),
    env: z
      .record(z.string(), z.string())
      .default({})
      .describe(
        'extra environment variables; a value starting "./" or "../" is a path relative to the TOML file',
      ),
    health_paths: z.array(z.string()).default(["/health", "/v1/models"]).describe("readiness checks"),
    startup_timeout_ms: z
      .number()
      .int()
      .positive()
      .default(1_800_000)
      .describe(
        "how long the server may take to answer its health checks (a cold model download + compile; prime-rl waits 1800 s)",
      ),
  })
  .strict()
  .prefault({});

/** `[trainer_process]`: the trainer process the launcher starts beside the orchestrator. */
export const trainerProcessSection = z
  .object({
    kind: z.enum(["prime-rl", "none"]).default("none").describe("which trainer process to start"),
    launch: z
      .enum(["torchrun", "entrypoint"])
      .default("torchrun")
      .describe("prime-rl: torchrun -m prime_rl.trainer.rl.train, or prime-rl's `trainer` entrypoint"),
    command: z
      .array(z.string())
      .optional()
      .describe(
        'program (and leading args) replacing `torchrun` / `trainer`, e.g. ["uv", "run", "torchrun"] or ["../scripts/torchrun-sid"]; "./…" and "../…" are relative to the TOML file',
      ),
    module: z
      .string()
      .default("prime_rl.trainer.rl.train")
      .describe(
        "launch = torchrun: the module torchrun runs (`-m`); air_tiny.trainer is the CPU stand-in (PYTHONPATH packages/tiny/py)",
      ),
    nnodes: z.number().int().positive().default(1).describe("torchrun --nnodes (multi-node)"),
    node_rank: z.number().int().min(0).default(0).describe("torchrun --node-rank of this machine"),
    master_addr: z.string().default("127.0.0.1").describe("rendezvous host (rank 0's address)"),
    master_port: z.number().int().min(1).max(65535).default(29500).describe("rendezvous port"),
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
      .number()
      .int()
      .positive()
      .optional()
      .describe("prime-rl trainer [model] seq_len (default: [model] max_model_len)"),
    weight_decay: z.number().min(0).optional().describe("prime-rl trainer [optim] weight_decay"),
    max_norm: z.number().positive().nullable().optional().describe("gradient clipping; null disables it"),
    trainer_config: z
      .record(z.string(), z.unknown())
      .default({})
      .describe("extra values for the generated prime-rl trainer TOML"),
    extra_args: z.array(z.string()).default([]),
    env: z
      .record(z.string(), z.string())
      .default({})
      .describe(
        'extra environment variables; a value starting "./" or "../" is a path relative to the TOML file',
      ),
    startup_timeout_ms: z.number().int().positive().default(120_000),
    max_restarts: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        "restarts of a trainer that crashes mid-run (as torchrun --max-restarts); each continues after the last step whose weights it finished; past it the run stops (exit 1)",
      ),
    ckpt_interval: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe(
        "prime-rl trainer [ckpt] interval: a resumable checkpoint every this many steps, for --resume and max_restarts (a restarted trainer trains the batches after its checkpoint again); 0: none",
      ),
    ckpt_keep_last: z
      .number()
      .int()
      .min(1)
      .default(2)
      .describe("prime-rl trainer [ckpt] keep_last: checkpoints kept on disk (older ones are removed)"),
  })
  .strict()
  .refine((t) => t.node_rank < t.nnodes, { message: "node_rank must be < nnodes", path: ["node_rank"] })
  .prefault({});

/** `[launcher]`: supervision settings. */
export const launcherSection = z
  .object({
    grace_ms: z
      .number()
      .int()
      .min(0)
      .default(10_000)
      .describe("after SIGTERM, how long children get before SIGKILL"),
    shutdown_timeout_ms: z
      .number()
      .int()
      .positive()
      .default(120_000)
      .describe("how long the orchestrator gets to stop after an abort"),
    log_tail_lines: z.number().int().positive().default(20).describe("log lines shown when a child fails"),
    preflight: z.boolean().default(true).describe("run preflight checks before starting"),
    docker_image: z
      .string()
      .optional()
      .describe("image that must be present (default: the env's `image`, for the mlgym env)"),
  })
  .strict()
  .prefault({});

export type DeploymentConfig = z.output<typeof deploymentSection>;
export type InferenceConfig = z.output<typeof inferenceSection>;
export type TrainerProcessConfig = z.output<typeof trainerProcessSection>;
export type LauncherConfig = z.output<typeof launcherSection>;

/** Sections the launcher adds to core's root schema. */
export const LAUNCHER_SECTIONS = {
  deployment: deploymentSection,
  inference: inferenceSection,
  trainer_process: trainerProcessSection,
  launcher: launcherSection,
  /** `[eval]`: read by `bun run eval` (@air/eval); `rl` accepts it so one file serves both. */
  ...APP_SECTIONS,
};

/**
 * A run's config as the launcher loads it: core's sections plus the launcher's, each typed by its schema.
 * @example const config: RunConfig = await resolveConfig("configs/quickstart.toml", []); config.root.inference.kind;
 */
export type RunConfig = ResolvedConfig<typeof LAUNCHER_SECTIONS>;
