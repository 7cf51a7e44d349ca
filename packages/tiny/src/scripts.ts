import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type TinyConfig, type TinyConfigInput, tinyConfigSchema } from "./config.ts";

const BIN_DIR = join(import.meta.dir, "..", "bin");

/** The CPU stand-in for prime-rl's `inference` entrypoint: `inference @ inference.toml`. */
export const TINY_SERVER_SCRIPT = join(BIN_DIR, "inference");
/** The CPU stand-in for prime-rl's `trainer` entrypoint: `trainer @ trainer.toml` (or `-m air_tiny.trainer` under torchrun). */
export const TINY_TRAINER_SCRIPT = join(BIN_DIR, "trainer");
/** PYTHONPATH for `torchrun ... -m air_tiny.trainer`. */
export const TINY_PY_DIR = join(import.meta.dir, "..", "py");
/** Debian's interpreter, which has torch 1.13, msgpack and zmq. */
export const TINY_PYTHON = "/usr/bin/python3";

/** A TOML document of inline values (strings as JSON strings, which TOML's basic strings accept). */
function toml(doc: Record<string, unknown>): string {
  const value = (v: unknown): string =>
    Array.isArray(v)
      ? `[${v.map(value).join(", ")}]`
      : typeof v === "object" && v !== null
        ? `{ ${Object.entries(v)
            .map(([k, x]) => `${k} = ${value(x)}`)
            .join(", ")} }`
        : JSON.stringify(v);
  return Object.entries(doc)
    .map(([k, v]) => `${k} = ${value(v)}\n`)
    .join("");
}

/** The files `writeTinyConfig` derives from `file`: the model directory and the two prime-rl TOMLs. */
export function tinyFiles(file: string): { modelDir: string; inference: string; trainer: string } {
  return { modelDir: `${file}.model`, inference: `${file}.inference.toml`, trainer: `${file}.trainer.toml` };
}

/**
 * The argv that starts a stand-in as prime-rl's entrypoint is started: `<script> @ <its TOML>`. Stop it with SIGTERM.
 * @example Bun.spawn(tinyArgv(TINY_SERVER_SCRIPT, "/run/tiny.json"))
 */
export function tinyArgv(script: string, configFile: string): string[] {
  const files = tinyFiles(configFile);
  return [TINY_PYTHON, script, "@", script === TINY_SERVER_SCRIPT ? files.inference : files.trainer];
}

/**
 * Validates a flat tiny config (filling defaults), writes it as JSON, and writes what the stand-ins read:
 * `<file>.model/config.json`, `<file>.inference.toml` and `<file>.trainer.toml` (prime-rl 0.9 layouts, router off).
 * @example writeTinyConfig("/run/tiny.json", { commands: ["ls", "validate"], run_dir: "/run/prime-rl" })
 */
export function writeTinyConfig(file: string, config: TinyConfigInput): TinyConfig {
  const c = tinyConfigSchema.parse(config);
  writeFileSync(file, `${JSON.stringify(c, null, 2)}\n`);
  const files = tinyFiles(file);
  mkdirSync(files.modelDir, { recursive: true });
  const model = {
    model_type: "air-tiny",
    commands: c.commands,
    discussion: c.discussion,
    d_model: c.d_model,
    layers: c.layers,
    heads: c.heads,
    context_tokens: c.context_tokens,
    seed: c.seed,
    max_position_embeddings: c.max_model_len,
  };
  writeFileSync(join(files.modelDir, "config.json"), `${JSON.stringify(model, null, 2)}\n`);
  const inference = {
    router: "None",
    server: { host: c.host, port: c.port },
    vllm: {
      model: files.modelDir,
      served_model_name: c.model_name,
      seed: c.seed,
      ...(c.lora ? { enable_lora: true, max_lora_rank: c.lora.rank } : {}),
    },
  };
  writeFileSync(files.inference, toml(inference));
  const runDir = c.run_dir ?? `${file}.out`;
  const v08 = c.prime_rl_version === "0.8";
  if (v08) {
    // What air's prime-rl plugin writes for 0.8: the trainer trains only a run_* dir that has control/orch.toml.
    mkdirSync(join(runDir, "control"), { recursive: true });
    writeFileSync(join(runDir, "control", "orch.toml"), "");
  }
  const metrics = c.metrics_file ?? "metrics.jsonl";
  const trainer: Record<string, unknown> = {
    output_dir: v08 ? dirname(runDir) : runDir,
    ...(v08 ? { max_concurrent_runs: 1 } : {}),
    model: { name: files.modelDir, ...(c.lora ? { lora: c.lora } : {}) },
    optim: {
      lr: c.lr,
      weight_decay: c.weight_decay,
      ...(c.max_norm === null ? {} : { max_norm: c.max_norm }),
    },
    loss: {
      dppo_mask_low: c.dppo_mask_low,
      dppo_mask_high: c.dppo_mask_high,
      adv_tau: c.adv_tau,
      kl_tau: c.kl_tau,
    },
    rollout_transport: { type: "filesystem" },
    weight_broadcast: { type: "filesystem" },
    ...(v08 ? { file_monitor: { filename: metrics } } : { monitors: { file: { path: metrics } } }),
    ...(c.max_steps === null ? {} : { max_steps: c.max_steps }),
  };
  if (c.max_norm === null) (trainer.optim as Record<string, unknown>).max_norm = "None";
  writeFileSync(files.trainer, toml(trainer));
  return c;
}
