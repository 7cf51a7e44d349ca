import type { PrimeRlVersion } from "./codecs/index.ts";

/**
 * How prime-rl's own `rl` entrypoint starts its children, per pinned version (`entrypoints/rl.py`,
 * `utils/process.py`; v0.8.0 = 60bc295, 0.9 = v0.8.1.dev67 559b447 — identical in both): the environment
 * layered as `os.environ`, the common defaults, the role's defaults, the user's `env_vars`, then
 * `CUDA_VISIBLE_DEVICES`; the trainer under `torchrun --role=trainer ... --local-ranks-filter=0 --redirect=3
 * --tee=3`.
 */
export interface PrimeRlProcessEnv {
  /** `DEFAULT_COMMON_ENV_VARS`: every child. */
  common: Record<string, string>;
  /** `DEFAULT_TRAINER_ENV_VARS`. */
  trainer: Record<string, string>;
  /** `DEFAULT_INFERENCE_ENV_VARS`. */
  inference: Record<string, string>;
  /** `TrainerLogConfig.ranks_filter` default: only rank 0 writes to the trainer's stdout (trainer.log). */
  ranksFilter: number[];
}

const SAME_AT_BOTH_PINS: PrimeRlProcessEnv = {
  common: {
    // Number GPUs as nvidia-smi (and air's preflight) does, not fastest-first.
    CUDA_DEVICE_ORDER: "PCI_BUS_ID",
    PYTHONUNBUFFERED: "1",
    OMP_NUM_THREADS: "1",
    GIT_LFS_SKIP_SMUDGE: "1",
  },
  trainer: { PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True" },
  inference: {
    VLLM_WORKER_MULTIPROC_METHOD: "spawn",
    PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:False",
    VLLM_ENGINE_READY_TIMEOUT_S: "4200",
    UCX_TLS: "all",
  },
  ranksFilter: [0],
};

/** The process environment prime-rl's `rl` sets, by version. */
export const PRIME_RL_PROCESS_ENV: Record<PrimeRlVersion, PrimeRlProcessEnv> = {
  "0.8": SAME_AT_BOTH_PINS,
  "0.9": SAME_AT_BOTH_PINS,
};

/**
 * prime-rl waits this long for the inference pool at start (`ClientConfig.wait_for_ready_timeout`, 1800 s) and
 * pre-downloads the model first; a cold download plus compile needs it.
 */
export const PRIME_RL_INFERENCE_READY_MS = 1_800_000;

function cuda(ids: number[]): Record<string, string> {
  return ids.length > 0 ? { CUDA_VISIBLE_DEVICES: ids.join(",") } : {};
}

/**
 * The trainer's environment as prime-rl's `rl` builds it: common + trainer defaults, the user's env, GPUs last.
 * `singleRank` adds what torchrun would set for one process (`launch = "entrypoint"`: prime-rl's trainer calls
 * `init_process_group`, which needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT).
 * @example primeRlTrainerEnv("0.9", [1], {}) // { CUDA_DEVICE_ORDER: "PCI_BUS_ID", ..., CUDA_VISIBLE_DEVICES: "1" }
 */
export function primeRlTrainerEnv(
  version: PrimeRlVersion,
  gpuIds: number[],
  userEnv: Record<string, string>,
  singleRank?: { masterAddr: string; masterPort: number },
): Record<string, string> {
  const d = PRIME_RL_PROCESS_ENV[version];
  const rank: Record<string, string> = singleRank
    ? {
        RANK: "0",
        LOCAL_RANK: "0",
        WORLD_SIZE: "1",
        LOCAL_WORLD_SIZE: "1",
        MASTER_ADDR: singleRank.masterAddr,
        MASTER_PORT: String(singleRank.masterPort),
      }
    : {};
  return { ...d.common, ...d.trainer, ...rank, ...userEnv, ...cuda(gpuIds) };
}

/**
 * An inference server's environment (prime-rl's `inference` or stock `vllm serve`), as prime-rl's `rl` sets it:
 * spawn workers, the engine-ready timeout, unbuffered output, PCI bus GPU order; the user's env, GPUs last.
 * @example primeRlInferenceEnv("0.9", [0], {}).VLLM_WORKER_MULTIPROC_METHOD // "spawn"
 */
export function primeRlInferenceEnv(
  version: PrimeRlVersion,
  gpuIds: number[],
  userEnv: Record<string, string>,
): Record<string, string> {
  const d = PRIME_RL_PROCESS_ENV[version];
  return { ...d.common, ...d.inference, ...userEnv, ...cuda(gpuIds) };
}

/** What the torchrun command needs from `[trainer_process]` and the run. */
export interface TorchrunOptions {
  /** Program and leading args replacing `torchrun` (e.g. `["uv", "run", "torchrun"]`). */
  command?: string[];
  /** The module torchrun runs (default prime-rl's `prime_rl.trainer.rl.train`; the CPU stand-in: `air_tiny.trainer`). */
  module?: string;
  nnodes: number;
  nodeRank: number;
  masterAddr: string;
  masterPort: number;
  rdzvId: string;
  /** torchrun's per-rank log dir. */
  logDir: string;
  nprocPerNode: number;
  tomlFile: string;
  extraArgs?: string[];
}

/**
 * The trainer command of prime-rl's `rl`: `torchrun --role=trainer --rdzv-endpoint=… --rdzv-id=… --log-dir=…
 * --local-ranks-filter=0 --redirect=3 --tee=3 --nproc-per-node=N -m prime_rl.trainer.rl.train @ <toml>`, with
 * `--nnodes` / `--node-rank` added for multi-node (prime-rl's single-node `rl` omits them; its SLURM template
 * passes them).
 * @example primeRlTorchrunArgv("0.9", { nnodes: 1, nodeRank: 0, masterAddr: "127.0.0.1", masterPort: 29500, rdzvId: "r", logDir: "/l", nprocPerNode: 2, tomlFile: "/t.toml" })
 */
export function primeRlTorchrunArgv(version: PrimeRlVersion, o: TorchrunOptions): string[] {
  const filter = PRIME_RL_PROCESS_ENV[version].ranksFilter.join(",");
  return [
    ...(o.command ?? ["torchrun"]),
    "--role=trainer",
    ...(o.nnodes > 1 ? [`--nnodes=${o.nnodes}`, `--node-rank=${o.nodeRank}`] : []),
    `--rdzv-endpoint=${o.masterAddr}:${o.masterPort}`,
    `--rdzv-id=${o.rdzvId}`,
    `--log-dir=${o.logDir}`,
    `--local-ranks-filter=${filter}`,
    "--redirect=3",
    "--tee=3",
    `--nproc-per-node=${o.nprocPerNode}`,
    "-m",
    o.module ?? "prime_rl.trainer.rl.train",
    "@",
    o.tomlFile,
    ...(o.extraArgs ?? []),
  ];
}

/**
 * Extra `vllm serve` flags so stock vLLM reports what prime-rl's trainer assumes: `--logprobs-mode
 * processed_logprobs` (prime-rl's server sets it: `configs/inference.py`; vLLM's default `raw_logprobs` is the
 * temperature-1 distribution, while the trainer divides logits by each token's sampling temperature). Not added
 * when the user's extra args already choose a mode.
 * @example vllmTrainingArgs([]) // ["--logprobs-mode", "processed_logprobs"]
 */
export function vllmTrainingArgs(extraArgs: string[]): string[] {
  const chosen = extraArgs.some((a) => a === "--logprobs-mode" || a.startsWith("--logprobs-mode="));
  return chosen ? [] : ["--logprobs-mode", "processed_logprobs"];
}

/** What the prime-rl inference TOML needs. */
export interface PrimeRlInferenceSettings {
  model: string;
  maxModelLen?: number;
  host: string;
  port: number;
  gpuMemoryUtilization: number;
  seed: number;
  tensorParallel: number;
  dtype?: string;
  lora?: { maxRank: number; maxLoras: number } | null;
  /** prime-rl's vllm-router on `port`, the engine on `backendPort`; undefined: no router, the engine on `port`. */
  router?: { backendPort: number };
}

/**
 * prime-rl's inference TOML (`inference @ file`) for a version. Without `router` it is written off (`router =
 * "None"`, the string prime-rl's own TOML writer uses for None) so the engine itself listens on `server.port`; with
 * it, prime-rl's default vllm-router takes `server.port` and the engine `backend_port` (written explicitly), and
 * air's admin calls (`/pause`, `/update_weights`, LoRA loading) go to the engine, as prime-rl's orchestrator sends
 * them (`admin_base_url`). 0.8 keeps the vLLM options at top level (`model`, `parallel.tp`, …); 0.9 moved them
 * under `[vllm]`.
 * @example TOML.stringify(primeRlInferenceDoc("0.9", { model: "m", host: "127.0.0.1", port: 8000, gpuMemoryUtilization: 0.9, seed: 0, tensorParallel: 1 }))
 */
export function primeRlInferenceDoc(
  version: PrimeRlVersion,
  s: PrimeRlInferenceSettings,
): Record<string, unknown> {
  const server = { host: s.host, port: s.port };
  const lora = s.lora ? { max_lora_rank: s.lora.maxRank, max_loras: s.lora.maxLoras } : {};
  const router = s.router
    ? { router: { type: "vllm-router" }, backend_port: s.router.backendPort }
    : { router: "None" };
  if (version === "0.8") {
    return {
      ...router,
      gpu_memory_utilization: s.gpuMemoryUtilization,
      seed: s.seed,
      enable_lora: s.lora != null,
      ...lora,
      model: {
        name: s.model,
        ...(s.maxModelLen ? { max_model_len: s.maxModelLen } : {}),
        ...(s.dtype ? { dtype: s.dtype } : {}),
      },
      server,
      parallel: { tp: s.tensorParallel },
      weight_broadcast: { type: "filesystem" },
    };
  }
  return {
    ...router,
    server,
    weight_broadcast: { type: "filesystem" },
    vllm: {
      model: s.model,
      gpu_memory_utilization: s.gpuMemoryUtilization,
      seed: s.seed,
      tensor_parallel_size: s.tensorParallel,
      enable_lora: s.lora != null,
      ...lora,
      ...(s.maxModelLen ? { max_model_len: s.maxModelLen } : {}),
      ...(s.dtype ? { dtype: s.dtype } : {}),
    },
  };
}
