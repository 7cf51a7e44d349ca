import type { ResolvedConfig } from "@air/core";
import { z } from "zod";
import { APP_SECTIONS } from "./builtins.ts";
import { processSection } from "./process-section.ts";

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

/** `[inference]`: the launcher's own keys, whatever the kind; each kind adds its own (`ProcessKind.section`). */
const inferenceKeys = {
  host: z.string().default("127.0.0.1").describe("address the server binds to"),
  port: z.number().int().min(1).max(65535).default(8000),
  url: z.string().optional().describe("base URL for kind = external, e.g. http://127.0.0.1:8000"),
  command: z
    .array(z.string())
    .optional()
    .describe(
      'program (and leading args) to run instead of the kind\'s (`vllm` / `inference`), e.g. ["uv", "run", "inference"]; "./…" and "../…" are relative to the TOML file',
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
};

/**
 * `[inference]`: the server the policy talks to, started by the launcher unless `kind = "external"`: the
 * launcher's keys, and the keys of the kind `kind` names, checked by that kind's own schema.
 */
export const inferenceSection = processSection(
  "inference",
  inferenceKeys,
  "external",
  "the server: a kind a plugin starts (vllm serve, prime-rl's inference entrypoint or a drop-in such as packages/tiny/bin/inference via command), or external: a URL already up",
).prefault({});

/** `[trainer_process]`: the launcher's keys of the trainer process it starts beside the orchestrator. */
const trainerProcessKeys = {
  command: z
    .array(z.string())
    .optional()
    .describe(
      'program (and leading args) replacing the kind\'s (`torchrun` / `trainer`), e.g. ["uv", "run", "torchrun"] or ["../scripts/torchrun-sid"]; "./…" and "../…" are relative to the TOML file',
    ),
  nnodes: z.number().int().positive().default(1).describe("torchrun --nnodes (multi-node)"),
  node_rank: z.number().int().min(0).default(0).describe("torchrun --node-rank of this machine"),
  master_addr: z.string().default("127.0.0.1").describe("rendezvous host (rank 0's address)"),
  master_port: z.number().int().min(1).max(65535).default(29500).describe("rendezvous port"),
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
};

/** `[trainer_process]`: the launcher's keys, and the keys of the kind `kind` names (its own schema). */
export const trainerProcessSection = processSection(
  "trainer_process",
  trainerProcessKeys,
  "none",
  "which trainer process to start: a kind a plugin starts (prime-rl), or none",
)
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

/** The launcher's own keys of each process section; the rest of it belongs to the kind `kind` names. */
export const LAUNCHER_KEYS = {
  trainer_process: new Set(["kind", ...Object.keys(trainerProcessKeys)]),
  inference: new Set(["kind", ...Object.keys(inferenceKeys)]),
};

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
