import {
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { FinalWeights, FinalWeightsContext } from "@air/core";
import type { PrimeRlConfig } from "./options.ts";
import { broadcastStepDir, primeRlPluginPaths, STABLE_FILE } from "./paths.ts";
import { resumeWeightsDir } from "./resume-weights.ts";
import { lastPrimeStepUpTo } from "./steps.ts";

/** The CPU stand-in for prime-rl's `inference` entrypoint (packages/tiny), which serves air's tiny models (vLLM does not). */
const TINY_INFERENCE = join(import.meta.dir, "..", "..", "tiny", "bin", "inference");

/** The CPU stand-in for stock `vllm serve` (packages/tiny), which serves a tiny base model with LoRA adapters. */
const TINY_VLLM = join(import.meta.dir, "..", "..", "tiny", "bin", "vllm");
/** The values vLLM accepts for `--max-lora-rank` (vllm/config/lora.py `MaxLoRARanks`; default 16). */
const VLLM_MAX_LORA_RANKS = [1, 8, 16, 32, 64, 128, 256, 320, 512];

/**
 * ` --max-lora-rank R` when the adapter's rank (`adapter_config.json` r) is above vLLM's default 16, which refuses
 * it otherwise; R is the smallest value vLLM accepts that holds it. Empty when r is unknown or at most 16.
 * @example maxLoraRankFlag("/out/run/final-weights") // " --max-lora-rank 32"
 */
function maxLoraRankFlag(dir: string): string {
  let r: unknown;
  try {
    r = JSON.parse(readFileSync(join(dir, "adapter_config.json"), "utf8")).r;
  } catch {
    return "";
  }
  if (typeof r !== "number" || r <= 16) return "";
  return ` --max-lora-rank ${VLLM_MAX_LORA_RANKS.find((v) => v >= r) ?? r}`;
}

/** true when `dir` holds a tiny model (config.json with model_type "air-tiny", packages/tiny). */
function isTinyModel(dir: string): boolean {
  try {
    return JSON.parse(readFileSync(join(dir, "config.json"), "utf8")).model_type === "air-tiny";
  } catch {
    return false;
  }
}

/** Files of a Hugging Face model dir that make weights loadable by transformers and vLLM (never the weights). */
const MODEL_FILES =
  /^(config\.json|generation_config\.json|tokenizer.*|special_tokens_map\.json|vocab\.(json|txt)|merges\.txt|chat_template\.(jinja|json)|added_tokens\.json)$/;

/**
 * The base model's own files (config, tokenizer): a local model dir, or its snapshot in the Hugging Face cache
 * (`$HF_HUB_CACHE`, `$HF_HOME/hub`, `~/.cache/huggingface/hub`: `models--org--name/snapshots/<rev>`). Undefined when
 * neither is on this machine.
 * @example baseModelDir("Qwen/Qwen3-0.6B") // "/root/.cache/huggingface/hub/models--Qwen--Qwen3-0.6B/snapshots/abc"
 */
export function baseModelDir(
  model: string,
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  if (existsSync(join(model, "config.json"))) return model;
  const hub = env.HF_HUB_CACHE ?? join(env.HF_HOME ?? join(homedir(), ".cache", "huggingface"), "hub");
  const snapshots = join(hub, `models--${model.replaceAll("/", "--")}`, "snapshots");
  if (!existsSync(snapshots)) return undefined;
  const found = readdirSync(snapshots)
    .map((rev) => join(snapshots, rev))
    .filter((d) => existsSync(join(d, "config.json")))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return found[0];
}

/**
 * A copy of `from` at `to` with its own inode: a reflink where the filesystem has them (btrfs, XFS: no data
 * copied), a full copy otherwise. Never a hard link: prime-rl rewrites a broadcast in place when a resumed or
 * restarted trainer broadcasts a step again (`save_file` truncates the file, `transports/weights/filesystem.py`
 * and `utils/weights.py` at 559b447), which would rewrite a linked deliverable with it.
 */
function ownCopy(from: string, to: string): void {
  copyFileSync(from, to, constants.COPYFILE_FICLONE);
}

/**
 * Makes the run's trained model a deliverable once it ends: the newest finished broadcast of the prime-rl trainer
 * (full weights or a LoRA adapter, as prime-rl's filesystem broadcast writes them) copied into `<run
 * dir>/final-weights` (reflinked where the filesystem can; see ownCopy), plus — for full weights — the base model's config and tokenizer files when they are on
 * this machine, so `vllm serve <dir>` and transformers' `from_pretrained(<dir>)` load it; a LoRA adapter
 * (`adapter_config.json` + `adapter_model.safetensors`) is served on its base model. Writes
 * `<run dir>/final-weights.json` (what the dashboard and scripts read). Undefined when the run finished no step.
 * The plugin's `launch.finalWeights` hook.
 * @example exportFinalWeights(config, ctx)?.serve // "vllm serve /out/run/final-weights"
 */
export function exportFinalWeights(
  config: PrimeRlConfig,
  ctx: FinalWeightsContext,
): FinalWeights | undefined {
  const last = ctx.lastCompletedStep;
  if (last === undefined) return undefined;
  const { runDir } = primeRlPluginPaths(config, ctx.runDir, ctx.configDir);
  const step = lastPrimeStepUpTo(runDir, last);
  // A resumed run that finished no new step: its weights are where resumeWeights set them aside.
  const source = [broadcastStepDir(runDir, step), resumeWeightsDir(runDir, step)].find((d) =>
    existsSync(join(d, STABLE_FILE)),
  );
  if (!source) return undefined;
  const dir = join(ctx.runDir, "final-weights");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(source))
    if (name !== STABLE_FILE && statSync(join(source, name)).isFile())
      ownCopy(join(source, name), join(dir, name));
  const model = ctx.modelName;
  const lora = config.lora || existsSync(join(dir, "adapter_config.json"));
  if (!lora) {
    const base = baseModelDir(model, ctx.env);
    if (base)
      for (const name of readdirSync(base))
        if (MODEL_FILES.test(name) && !existsSync(join(dir, name)))
          copyFileSync(join(base, name), join(dir, name));
  }
  const loadable = existsSync(join(dir, lora ? "adapter_config.json" : "config.json"));
  const serve = lora
    ? `${isTinyModel(model) ? `${TINY_VLLM} serve` : "vllm serve"} ${model} --enable-lora${maxLoraRankFlag(dir)} --lora-modules air=${dir}`
    : isTinyModel(dir)
      ? `${TINY_INFERENCE} --vllm.model ${dir}`
      : loadable
        ? `vllm serve ${dir}`
        : `copy ${model}'s config.json and tokenizer files into ${dir}, then: vllm serve ${dir}`;
  const result: FinalWeights = { dir, kind: lora ? "lora" : "full", step: last, source, loadable, serve };
  writeFileSync(join(ctx.runDir, "final-weights.json"), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}
