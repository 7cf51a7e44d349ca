import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { DiskEstimate, ProcessContext } from "@air/core";
import type { PrimeRlTrainerSection } from "./launch-sections.ts";
import { trainerCheckpointInterval } from "./trainer-keys.ts";
import { primeRlPaths, primeRlSettings } from "./trainer-toml.ts";

/**
 * Bytes per parameter in a prime-rl trainer checkpoint (trainer/ckpt.py at 559b447: DCP of the FSDP model and
 * its AdamW state): fp32 weights (4) + AdamW's exp_avg and exp_avg_sq (4 + 4). Under LoRA the DCP state still
 * holds the frozen base in fp32 (4 per base parameter); the adapter and its optimizer state are left out (far
 * below 1% at rank 32 of a 4B model).
 */
export const FULL_BYTES = 12;
export const LORA_BASE_BYTES = 4;

/** A dense decoder's parameters from its HF config.json (Qwen3 / Llama layout: attention, gated MLP, norms). */
function fromHfConfig(c: Record<string, unknown>): number | undefined {
  const n = (k: string) => (typeof c[k] === "number" ? c[k] : undefined);
  const hidden = n("hidden_size");
  const layers = n("num_hidden_layers");
  const inter = n("intermediate_size");
  const vocab = n("vocab_size");
  const heads = n("num_attention_heads");
  if (!hidden || !layers || !inter || !vocab || !heads) return undefined;
  const headDim = n("head_dim") ?? hidden / heads;
  const kv = n("num_key_value_heads") ?? heads;
  const attention = hidden * heads * headDim * 2 + hidden * kv * headDim * 2;
  const perLayer = attention + 3 * hidden * inter + 2 * hidden + 2 * headDim;
  const embeddings = vocab * hidden * (c.tie_word_embeddings === false ? 2 : 1);
  return embeddings + layers * perLayer + hidden;
}

/** `config.json` of a local model dir, or of the newest snapshot in the Hugging Face cache. */
function configJson(model: string, env: Record<string, string | undefined>): string | undefined {
  const local = join(model, "config.json");
  if (existsSync(local)) return local;
  const home = env.HF_HOME ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "huggingface");
  const snapshots = join(
    env.HF_HUB_CACHE ?? join(home, "hub"),
    `models--${model.replace("/", "--")}`,
    "snapshots",
  );
  if (!existsSync(snapshots)) return undefined;
  const found = readdirSync(snapshots)
    .map((s) => join(snapshots, s, "config.json"))
    .filter((f) => existsSync(f));
  return found[0];
}

/**
 * The model's parameter count and where it came from: its config.json (a local dir or the Hugging Face cache),
 * else the size its name states ("Qwen/Qwen3-4B" → 4e9); undefined when neither says.
 * @example modelParameters("Qwen/Qwen3-0.6B", {}) // { count: 600000000, from: "the model name (0.6B)" }
 */
export function modelParameters(
  model: string,
  env: Record<string, string | undefined>,
): { count: number; from: string } | undefined {
  const file = configJson(model, env);
  if (file) {
    const count = fromHfConfig(JSON.parse(readFileSync(file, "utf8")));
    if (count) return { count, from: file };
  }
  const named = /(?:^|[-_/])(\d+(?:\.\d+)?)([BM])(?:$|[-_])/i.exec(model);
  if (!named?.[1] || !named[2]) return undefined;
  const scale = named[2].toUpperCase() === "B" ? 1e9 : 1e6;
  return { count: Number(named[1]) * scale, from: `the model name (${named[1]}${named[2]})` };
}

/**
 * What prime-rl's trainer checkpoints keep on disk (`<output_dir>/checkpoints`): parameters × bytes per
 * parameter (fp32 weights + AdamW state; under LoRA the fp32 base), × (`keep_last` + 1), since prime-rl saves
 * a checkpoint before it removes the oldest (trainer/rl/train.py: `save`, then `maybe_clean`). Undefined when the
 * parameter count is unknown (a stand-in's tiny model).
 * @example checkpointDisk(ctx, process.env)?.bytes // 144e9 for Qwen3-4B, full fine-tuning, keep_last 2
 */
export function checkpointDisk(
  ctx: ProcessContext<PrimeRlTrainerSection>,
  env: Record<string, string | undefined>,
): DiskEstimate | undefined {
  const params = modelParameters(ctx.model.name, env);
  if (!params) return undefined;
  const lora = primeRlSettings(ctx).lora;
  const each = params.count * (lora ? LORA_BASE_BYTES : FULL_BYTES);
  const interval = trainerCheckpointInterval(ctx);
  const keep = ctx.section.ckpt_keep_last;
  const what = lora ? "the fp32 base the LoRA run's DCP state holds" : "fp32 weights + AdamW's two moments";
  const size = `${gb(each)} per checkpoint (${(params.count / 1e9).toFixed(2)}B parameters from ${params.from} × ${lora ? LORA_BASE_BYTES : FULL_BYTES} B: ${what})`;
  const dir = join(resolve(primeRlPaths(ctx).outputDir), "checkpoints");
  if (interval.interval === 0)
    return {
      dir,
      bytes: 0,
      how: `${interval.key} = 0: no checkpoints; each would be ${size}`,
      keys: [interval.key],
    };
  return {
    dir,
    bytes: each * (keep + 1),
    how: `${size} × (trainer_process.ckpt_keep_last = ${keep} + 1 being saved) = ${gb(each * (keep + 1))}, one every ${interval.interval} step(s) (${interval.key})`,
    keys: [interval.key, "trainer_process.ckpt_keep_last"],
  };
}

function gb(bytes: number): string {
  return `${(bytes / 1e9).toFixed(1)} GB`;
}
