import { deepMerge, type ProcessContext } from "@air/core";
import TOML from "@iarna/toml";
import type { PrimeRlVersion } from "./codecs/index.ts";
import { primeRlTrainerConfig } from "./config.ts";
import { seqLen } from "./derive.ts";
import { unknownPrimeRlKeys } from "./fields.ts";
import type { PrimeRlTrainerSection } from "./launch-sections.ts";
import { type PrimeRlConfig, primeRlConfigSchema } from "./options.ts";
import { primeRlPluginPaths } from "./paths.ts";

/**
 * The settings prime-rl's processes must match, as the run's trainer plugin gives them (its
 * `launch.processSettings` hook: this plugin's `[trainer]` section), or prime-rl's defaults when the trainer
 * plugin has none (e.g. a run that starts a prime-rl server for another trainer).
 * @example primeRlSettings(ctx).prime_rl_version // "0.9"
 */
export function primeRlSettings(ctx: Pick<ProcessContext, "trainerSettings">): PrimeRlConfig {
  return primeRlConfigSchema.parse(ctx.trainerSettings);
}

/**
 * Where the prime-rl transport plugin and the trainer process meet, resolved exactly as the
 * `[trainer] plugin = "prime-rl"` plugin does for its `prime_rl_version`: the trainer's `output_dir`, the
 * orchestrator's run dir (0.8: `<output_dir>/run_default`; 0.9: the output dir itself) and the metrics JSONL.
 * @example primeRlPaths(ctx) // { version: "0.9", outputDir: "/abs/out/run/prime-rl", runDir: "/abs/out/run/prime-rl", metricsFile: ".../metrics.jsonl" }
 */
export function primeRlPaths(ctx: Pick<ProcessContext, "trainerSettings" | "runDir" | "configDir">): {
  version: PrimeRlVersion;
  outputDir: string;
  runDir: string;
  metricsFile: string;
} {
  const settings = primeRlSettings(ctx);
  return { version: settings.prime_rl_version, ...primeRlPluginPaths(settings, ctx.runDir, ctx.configDir) };
}

/**
 * A user's own trainer TOML (`[trainer_process] config_file`) with the step air resumes at: 0.9 `[resume] step`,
 * 0.8 `[ckpt] resume_step`, as `primeRlTrainerConfig` writes them (replacing any the file sets), under a comment
 * naming the file it came from.
 * @example withResumeStep("[model]\nname = \"m\"\n", "0.9", 3, "/cfg/own.toml") // "# /cfg/own.toml, ...\n[model]\n...[resume]\nstep = 3\n"
 */
export function withResumeStep(text: string, version: PrimeRlVersion, step: number, from: string): string {
  const resume = version === "0.8" ? { ckpt: { resume_step: step } } : { resume: { step } };
  const merged = TOML.stringify(deepMerge(TOML.parse(text), resume) as TOML.JsonMap);
  return `# ${from}, with the step \`rl --resume\` continues at\n${merged}`;
}

/**
 * The prime-rl trainer TOML for a run and the plugin's `prime_rl_version`: model, output dir (shared with the
 * transport plugin), lr, seq_len (the packing bin size, `seqLen`), LoRA, the rollout transport (ZMQ host/port when the plugin uses it) and, when
 * resuming, the checkpoint step; then `trainer_config` merged on top. Every key must exist in prime-rl's
 * `TrainerConfig` at the pinned commit, or this throws naming the unknown keys.
 * @example primeRlTrainerToml(ctx, { resumeStep: 4 })
 */
export function primeRlTrainerToml(
  ctx: ProcessContext<PrimeRlTrainerSection>,
  options: { resumeStep?: number } = {},
): string {
  const { section: tp, model } = ctx;
  const t = primeRlSettings(ctx);
  const lora = t.lora ? { rank: t.lora_rank, alpha: t.lora_alpha } : null;
  const text = primeRlTrainerConfig({
    version: t.prime_rl_version,
    model: model.name,
    outputDir: primeRlPaths(ctx).outputDir,
    lr: tp.lr,
    seqLen: seqLen(t, model.max_model_len).value,
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
