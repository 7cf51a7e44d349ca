import { dirname, isAbsolute, join, resolve } from "node:path";
import { deepMerge } from "@air/core";
import { primeRlTrainerConfig } from "@air/trainer-prime-rl";
import TOML from "@iarna/toml";
import type { RunConfig } from "./sections.ts";

/** The `[trainer]` section, when it is the prime-rl transport plugin. */
function primeRlSection(config: RunConfig): Record<string, unknown> {
  return config.plugins.trainer.definition.name === "prime-rl"
    ? (config.plugins.trainer.config as Record<string, unknown>)
    : {};
}

/**
 * Where the prime-rl transport plugin and the trainer process meet: the trainer's `output_dir` and the
 * orchestrator's run dir under it, resolved the way the `[trainer] plugin = "prime-rl"` plugin does.
 * @example primeRlPaths(config) // { outputDir: "/abs/out/run/prime-rl", runDir: "/abs/out/run/prime-rl/run_default" }
 */
export function primeRlPaths(config: RunConfig): { outputDir: string; runDir: string } {
  const t = primeRlSection(config);
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(config.dir, p));
  const runName = typeof t.run_name === "string" ? t.run_name : "run_default";
  // A run dir given alone lives in the trainer's output dir (prime-rl's multi-run layout): its parent.
  const outputDir =
    typeof t.output_dir === "string"
      ? abs(t.output_dir)
      : typeof t.run_dir === "string"
        ? dirname(abs(t.run_dir))
        : join(config.runDir, "prime-rl");
  const runDir = typeof t.run_dir === "string" ? abs(t.run_dir) : join(outputDir, runName);
  return { outputDir, runDir };
}

/**
 * The prime-rl v0.8.0 trainer TOML for a run, from @air/trainer-prime-rl's `primeRlTrainerConfig`:
 * model, output dir (shared with the transport plugin), lr, seq_len, LoRA, then `trainer_config` merged on top.
 */
export async function primeRlTrainerToml(config: RunConfig): Promise<string> {
  const { trainer_process: tp } = config.root;
  const t = primeRlSection(config);
  const lora =
    t.lora === true ? { rank: Number(t.lora_rank ?? 16), alpha: Number(t.lora_alpha ?? 32) } : null;
  const text = primeRlTrainerConfig({
    model: config.root.model.name,
    outputDir: primeRlPaths(config).outputDir,
    lr: tp.lr,
    seqLen: tp.seq_len ?? config.root.model.max_model_len ?? 4096,
    weightDecay: tp.weight_decay,
    maxNorm: tp.max_norm,
    lora,
  });
  if (Object.keys(tp.trainer_config).length === 0) return text;
  return TOML.stringify(deepMerge(TOML.parse(text), tp.trainer_config) as TOML.JsonMap);
}
