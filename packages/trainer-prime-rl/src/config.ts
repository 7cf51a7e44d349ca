import TOML from "@iarna/toml";
import { NEWEST_PRIME_RL, type PrimeRlVersion } from "./codecs/index.ts";

/** prime-rl's default loss (`DefaultLossConfig`, same at both pins): DPPO-Binary TV masking plus a KL term. */
export interface PrimeRlLoss {
  type: "default";
  /** Mask a negative-advantage token when its probability fell by more than this (default 0.2). */
  dppo_mask_low?: number;
  /** Mask a positive-advantage token when its probability rose by more than this (default 0.2). */
  dppo_mask_high?: number;
  /** Advantage scale (default 1). */
  adv_tau?: number;
  /** Weight of the squared log-ratio term (default 1e-3). */
  kl_tau?: number;
}

/** What air knows that prime-rl's trainer needs. */
export interface PrimeRlTrainerSettings {
  /** HF model name or local path (`[model] name`). */
  model: string;
  /** The trainer's output dir; the orchestrator's run dir is `<output_dir>/run_default` (multi-run manager). */
  outputDir: string;
  /** Learning rate (`[optim] lr`, AdamW). */
  lr: number;
  /** Max tokens of one packed micro-batch sequence (`[model] seq_len`). */
  seqLen: number;
  maxSteps?: number;
  loss?: PrimeRlLoss;
  weightDecay?: number;
  /** Gradient clipping (`[optim] max_norm`); undefined or null: not written, prime-rl's default 1.0 (TOML has no null). */
  maxNorm?: number | null;
  /** LoRA adapter training instead of full weights (`[model.lora]`). */
  lora?: { rank: number; alpha: number } | null;
  /** Runs the trainer serves at once (`max_concurrent_runs`). */
  maxConcurrentRuns?: number;
  /** Write `<output_dir>/metrics.jsonl` (0.8 `[file_monitor]`, 0.9 `[monitors.file]`), which trainer-prime-rl reads. Default true. */
  fileMonitor?: boolean;
  /** prime-rl version to write the TOML for (default: the newest). */
  version?: PrimeRlVersion;
  /** Save a resumable checkpoint every this many steps (`[ckpt] interval`); without it `--resume` restarts from base weights. */
  ckptInterval?: number;
  /** Keep this many newest checkpoints (`[ckpt] keep_last`); prime-rl removes older ones after each save. */
  ckptKeepLast?: number;
  /** Resume from the checkpoint of this prime-rl step (0.8 `[ckpt] resume_step`, 0.9 `[resume] step`). */
  resumeStep?: number;
  /** Rollout transport (default filesystem; zmq: 0.9 only). */
  transport?: { type: "filesystem" } | { type: "zmq"; host: string; port: number };
}

function clean(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

/**
 * Builds prime-rl's trainer TOML (`TrainerConfig`; `torchrun … -m prime_rl.trainer.rl.train @ trainer.toml`) for
 * `settings.version` (default: the newest). Rollouts come over the filesystem transport unless `transport` says
 * zmq (prime-rl's default is zmq), weights go out as files, metrics to `<output_dir>/metrics.jsonl`. Every key is
 * checked against prime-rl's config classes at the pinned commits (`golden/fields`).
 * @example writeFileSync("trainer.toml", primeRlTrainerConfig({ model: "Qwen/Qwen3-0.6B", outputDir: "/out", lr: 1e-6, seqLen: 4096 }));
 */
export function primeRlTrainerConfig(settings: PrimeRlTrainerSettings): string {
  const version = settings.version ?? NEWEST_PRIME_RL;
  const loss = settings.loss ?? { type: "default" };
  const v08 = version === "0.8";
  const monitor = settings.fileMonitor !== false;
  const ckpt = clean({
    interval: settings.ckptInterval,
    keep_last: settings.ckptKeepLast,
    resume_step: v08 ? settings.resumeStep : undefined,
  });
  const doc = clean({
    output_dir: settings.outputDir,
    max_steps: settings.maxSteps,
    max_concurrent_runs: v08 ? (settings.maxConcurrentRuns ?? 1) : undefined,
    model: clean({
      name: settings.model,
      seq_len: settings.seqLen,
      lora: settings.lora ? { rank: settings.lora.rank, alpha: settings.lora.alpha } : undefined,
    }),
    optim: clean({
      type: "adamw",
      lr: settings.lr,
      weight_decay: settings.weightDecay,
      max_norm: settings.maxNorm === null ? undefined : settings.maxNorm,
    }),
    loss: clean({ ...loss }),
    ckpt: Object.keys(ckpt).length > 0 ? ckpt : undefined,
    resume: !v08 && settings.resumeStep !== undefined ? { step: settings.resumeStep } : undefined,
    rollout_transport: settings.transport ?? { type: "filesystem" },
    weight_broadcast: { type: "filesystem" },
    file_monitor: v08 && monitor ? { filename: "metrics.jsonl" } : undefined,
    // 0.9 writes <output_dir>/metrics.jsonl by default; "None" (prime-rl's TOML spelling of None) turns it off.
    monitors: !v08 ? { file: monitor ? { path: "metrics.jsonl" } : "None" } : undefined,
  });
  return TOML.stringify(doc as TOML.JsonMap);
}

/** What the orchestrator side records in `<run_dir>/control/orch.toml`. */
export interface PrimeRlRunSettings {
  model: string;
  /** The run dir (`<trainer output_dir>/run_*`). */
  runDir: string;
  maxSteps?: number;
  maxOffPolicySteps?: number;
  temperature?: number;
  lora?: { rank: number; alpha: number } | null;
  /** The prime-rl step this run resumes after (`[ckpt] resume_step`): the trainer's receiver starts at the next. */
  resumeStep?: number;
}

/**
 * The `control/orch.toml` prime-rl's orchestrator writes at start-up. The trainer's multi-run manager only
 * trains a `run_*` directory that has it (it parses it as `OrchestratorConfig`: model, LoRA, transport).
 * @example writeFileSync(join(runDir, "control/orch.toml"), orchestratorControlToml({ model: "m", runDir }));
 */
export function orchestratorControlToml(settings: PrimeRlRunSettings): string {
  const doc = clean({
    output_dir: settings.runDir,
    max_steps: settings.maxSteps,
    max_off_policy_steps: settings.maxOffPolicySteps,
    model: clean({
      name: settings.model,
      lora: settings.lora ? { rank: settings.lora.rank, alpha: settings.lora.alpha } : undefined,
    }),
    train:
      settings.temperature === undefined ? undefined : { sampling: { temperature: settings.temperature } },
    ckpt: settings.resumeStep === undefined ? undefined : { resume_step: settings.resumeStep },
    // OrchestratorConfig refuses renderer "auto" for a model missing from prime-rl's MODEL_RENDERER_MAP (a
    // fine-tune, a local path); air renders prompts itself, so name the default renderer.
    renderer: { name: "default" },
    rollout_transport: { type: "filesystem" },
    weight_broadcast: { type: "filesystem" },
  });
  return TOML.stringify(doc as TOML.JsonMap);
}
