import { deepMerge } from "@air/core";
import {
  type PrimeRlConfig,
  type PrimeRlVersion,
  primeRlConfigSchema,
  primeRlPluginPaths,
  primeRlTrainerConfig,
  unknownPrimeRlKeys,
} from "@air/trainer-prime-rl";
import TOML from "@iarna/toml";
import type { RunConfig } from "./sections.ts";

/**
 * The settings prime-rl's processes must match, as the trainer plugin gives them (its `launch.processSettings`
 * hook: the prime-rl plugin's `[trainer]` section), or prime-rl's defaults when the trainer plugin has none (e.g.
 * a run that starts a prime-rl server for another trainer).
 * @example primeRlSettings(config).prime_rl_version // "0.9"
 */
export function primeRlSettings(config: RunConfig): PrimeRlConfig {
  const { definition, config: trainerConfig } = config.plugins.trainer;
  return primeRlConfigSchema.parse(definition.launch?.processSettings?.(trainerConfig) ?? {});
}

/**
 * Where the prime-rl transport plugin and the trainer process meet, resolved exactly as the
 * `[trainer] plugin = "prime-rl"` plugin does for its `prime_rl_version`: the trainer's `output_dir`, the
 * orchestrator's run dir (0.8: `<output_dir>/run_default`; 0.9: the output dir itself) and the metrics JSONL.
 * @example primeRlPaths(config) // { version: "0.9", outputDir: "/abs/out/run/prime-rl", runDir: "/abs/out/run/prime-rl", metricsFile: ".../metrics.jsonl" }
 */
export function primeRlPaths(config: RunConfig): {
  version: PrimeRlVersion;
  outputDir: string;
  runDir: string;
  metricsFile: string;
} {
  const settings = primeRlSettings(config);
  return { version: settings.prime_rl_version, ...primeRlPluginPaths(settings, config.runDir, config.dir) };
}

/**
 * The prime-rl trainer TOML for a run and the plugin's `prime_rl_version`: model, output dir (shared with the
 * transport plugin), lr, seq_len, LoRA, the rollout transport (ZMQ host/port when the plugin uses it) and, when
 * resuming, the checkpoint step; then `trainer_config` merged on top. Every key must exist in prime-rl's
 * `TrainerConfig` at the pinned commit, or this throws naming the unknown keys.
 * @example await primeRlTrainerToml(config, { resumeStep: 4 })
 */
export async function primeRlTrainerToml(
  config: RunConfig,
  options: { resumeStep?: number } = {},
): Promise<string> {
  const { trainer_process: tp } = config.root;
  const t = primeRlSettings(config);
  const lora = t.lora ? { rank: t.lora_rank, alpha: t.lora_alpha } : null;
  const text = primeRlTrainerConfig({
    version: t.prime_rl_version,
    model: config.root.model.name,
    outputDir: primeRlPaths(config).outputDir,
    lr: tp.lr,
    seqLen: tp.seq_len ?? config.root.model.max_model_len ?? 4096,
    weightDecay: tp.weight_decay,
    maxNorm: tp.max_norm,
    lora,
    resumeStep: options.resumeStep,
    ckptInterval: tp.ckpt_interval > 0 ? tp.ckpt_interval : undefined,
    ckptKeepLast: tp.ckpt_interval > 0 ? tp.ckpt_keep_last : undefined,
    transport:
      t.transport === "zmq"
        ? { type: "zmq", host: t.zmq_host ?? "localhost", port: t.zmq_port }
        : { type: "filesystem" },
  });
  const merged =
    Object.keys(tp.trainer_config).length === 0
      ? text
      : TOML.stringify(deepMerge(TOML.parse(text), tp.trainer_config) as TOML.JsonMap);
  const unknown = unknownPrimeRlKeys(merged, t.prime_rl_version, "TrainerConfig");
  if (unknown.length > 0)
    throw new Error(
      `[trainer_process] trainer_config: prime-rl ${t.prime_rl_version}'s TrainerConfig has no ${unknown.join(", ")}`,
    );
  return merged;
}
