import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ProcessContext, ProcessKind, ProcessSpec, ProcessStart } from "@air/core";
import TOML from "@iarna/toml";
import { launchSections } from "./launch-sections.ts";
import {
  primeRlInferenceDoc,
  primeRlInferenceEnv,
  primeRlTorchrunArgv,
  primeRlTrainerEnv,
  vllmTrainingArgs,
} from "./prime-rl-argv.ts";
import { primeRlPaths, primeRlTrainerToml, withResumeStep } from "./trainer-toml.ts";

/** prime-rl's `backend_port`: where the engine listens behind its router (default: port + 100, as prime-rl). */
function engineBackendPort(ctx: ProcessContext): number {
  const { inf } = launchSections(ctx);
  return inf.backend_port ?? inf.port + 100;
}

/**
 * The `vllm serve` command for `[inference]`: model, host, port, max-model-len, tensor parallelism over
 * the inference GPUs, LoRA flags, extra args.
 * @example vllmServeArgv(ctx)
 */
export function vllmServeArgv(ctx: ProcessStart): string[] {
  const { inf, model, run } = launchSections(ctx);
  const maxLen = inf.max_model_len ?? model.max_model_len;
  const tp = inf.tensor_parallel_size ?? Math.max(1, ctx.gpuCount);
  const argv = [
    ...(inf.command ?? ["vllm"]),
    "serve",
    inf.model ?? model.name,
    "--host",
    inf.host,
    "--port",
    String(inf.port),
  ];
  argv.push("--gpu-memory-utilization", String(inf.gpu_memory_utilization));
  argv.push("--tensor-parallel-size", String(tp), "--seed", String(run.seed));
  if (maxLen !== undefined) argv.push("--max-model-len", String(maxLen));
  if (inf.served_model_name) argv.push("--served-model-name", inf.served_model_name);
  if (inf.dtype) argv.push("--dtype", inf.dtype);
  if (inf.lora.enabled) {
    argv.push("--enable-lora", "--max-lora-rank", String(inf.lora.max_rank));
    argv.push("--max-loras", String(inf.lora.max_loras));
    const modules = Object.entries(inf.lora.modules).map(
      ([name, path]) => `${name}=${resolve(ctx.configDir, path)}`,
    );
    if (modules.length > 0) argv.push("--lora-modules", ...modules);
  }
  return [...argv, ...vllmTrainingArgs(inf.extra_args), ...inf.extra_args];
}

/** prime-rl's inference TOML (`inference @ file`) for `[inference]`. */
export function primeRlInferenceToml(ctx: ProcessStart): string {
  const { inf, model, run } = launchSections(ctx);
  const doc = primeRlInferenceDoc(primeRlPaths(ctx).version, {
    model: inf.model ?? model.name,
    maxModelLen: inf.max_model_len ?? model.max_model_len,
    host: inf.host,
    port: inf.port,
    gpuMemoryUtilization: inf.gpu_memory_utilization,
    seed: run.seed,
    tensorParallel: inf.tensor_parallel_size ?? Math.max(1, ctx.gpuCount),
    dtype: inf.dtype,
    lora: inf.lora.enabled ? { maxRank: inf.lora.max_rank, maxLoras: inf.lora.max_loras } : null,
    router: inf.router ? { backendPort: engineBackendPort(ctx) } : undefined,
  });
  return TOML.stringify(doc as TOML.JsonMap);
}

/** The server's environment as prime-rl's `rl` sets it (stock vLLM gets the same). */
function serverEnv(ctx: ProcessStart): Record<string, string> {
  const { inf } = launchSections(ctx);
  return primeRlInferenceEnv(primeRlPaths(ctx).version, ctx.gpuIds, inf.env);
}

/** `[inference] kind = "vllm"`: stock `vllm serve` with what prime-rl's trainer assumes. */
const vllmServer: ProcessKind = {
  spec: (ctx) => {
    const env = serverEnv(ctx);
    if (launchSections(ctx).inf.lora.enabled) env.VLLM_ALLOW_RUNTIME_LORA_UPDATING ??= "True";
    return { argv: vllmServeArgv(ctx), env, files: [] };
  },
};

/**
 * `[inference] kind = "prime-rl"`: `<command> @ <run dir>/configs/inference.toml` (command: prime-rl's
 * `inference`, or the CPU stand-in packages/tiny/bin/inference); with `router = true` the engine moves to
 * `backend_port`.
 */
const primeRlServer: ProcessKind = {
  spec: (ctx) => {
    const { inf } = launchSections(ctx);
    const path = join(ctx.runDir, "configs", "inference.toml");
    return {
      argv: [...(inf.command ?? ["inference"]), "@", path, ...inf.extra_args],
      env: serverEnv(ctx),
      files: [{ path, text: primeRlInferenceToml(ctx) }],
    };
  },
  enginePort: (ctx) => (launchSections(ctx).inf.router ? engineBackendPort(ctx) : undefined),
};

/**
 * prime-rl's trainer: it writes (or takes, `config_file`) prime-rl's trainer TOML and runs `torchrun ... -m
 * <module> @ <toml>` (module: prime_rl.trainer.rl.train, or the CPU stand-in air_tiny.trainer) or, with `launch
 * = "entrypoint"`, `<command> @ <toml>` (prime-rl's `trainer`). A user's `config_file` is used as is, except when
 * resuming: then a copy with the resume step (`withResumeStep`) under `<run dir>/configs/` (the file is never
 * written).
 */
export function primeRlTrainerSpec(ctx: ProcessStart): ProcessSpec {
  const { tp, run } = launchSections(ctx);
  const version = primeRlPaths(ctx).version;
  const files: ProcessSpec["files"] = [];
  const generated = join(ctx.runDir, "configs", "trainer.toml");
  let file = generated;
  if (!tp.config_file)
    files.push({ path: file, text: primeRlTrainerToml(ctx, { resumeStep: ctx.resumeStep }) });
  else {
    const own = resolve(ctx.configDir, tp.config_file);
    if (ctx.resumeStep === undefined) file = own;
    else
      files.push({
        path: file,
        text: withResumeStep(readFileSync(own, "utf8"), version, ctx.resumeStep, own),
      });
  }
  if (tp.launch === "entrypoint") {
    // One process without torchrun: give init_process_group the single-rank environment torchrun would.
    const single = { masterAddr: tp.master_addr, masterPort: tp.master_port };
    const env = primeRlTrainerEnv(version, ctx.gpuIds, tp.env, single);
    return { argv: [...(tp.command ?? ["trainer"]), "@", file, ...tp.extra_args], env, files };
  }
  const argv = primeRlTorchrunArgv(version, {
    command: tp.command,
    module: tp.module,
    nnodes: tp.nnodes,
    nodeRank: tp.node_rank,
    masterAddr: tp.master_addr,
    masterPort: tp.master_port,
    rdzvId: run.name,
    logDir: join(ctx.runDir, "logs", "torchrun"),
    nprocPerNode: Math.max(1, ctx.gpuCount),
    tomlFile: file,
    extraArgs: tp.extra_args,
  });
  return { argv, env: primeRlTrainerEnv(version, ctx.gpuIds, tp.env), files };
}

/** The user's own trainer TOML (`[trainer_process] config_file`), parsed, with the key naming it. */
function userTrainerToml(ctx: ProcessContext): { doc: Record<string, unknown>; key: string } | undefined {
  const { tp } = launchSections(ctx);
  if (!tp.config_file) return undefined;
  const file = resolve(ctx.configDir, tp.config_file);
  const doc = existsSync(file) ? (TOML.parse(readFileSync(file, "utf8")) as Record<string, unknown>) : {};
  return { doc, key: `trainer_process.config_file (${file})` };
}

/** The trainer's context parallel degree (`[model] cp`), as its TOML sets it. */
function contextParallel(ctx: ProcessContext): { cp: number; key: string } {
  const own = userTrainerToml(ctx);
  const model = (own ? own.doc.model : launchSections(ctx).tp.trainer_config.model) as
    | { cp?: unknown }
    | undefined;
  const key = own ? `${own.key} [model] cp` : "trainer_process.trainer_config.model.cp";
  return { cp: typeof model?.cp === "number" ? model.cp : 1, key };
}

/**
 * The trainer's `[ckpt] interval` as its TOML sets it (generated: `[trainer_process] ckpt_interval`, then
 * `trainer_config`; or the user's `config_file`), with the key that sets it; interval 0 is none.
 * @example trainerCheckpointInterval(ctx) // { interval: 1, key: "trainer_process.ckpt_interval" }
 */
export function trainerCheckpointInterval(ctx: ProcessContext): { interval: number; key: string } {
  const { tp } = launchSections(ctx);
  const read = (doc: unknown) => {
    const v = (doc as { ckpt?: { interval?: unknown } } | undefined)?.ckpt?.interval;
    return typeof v === "number" ? v : undefined;
  };
  const own = userTrainerToml(ctx);
  if (own) return { interval: read(own.doc) ?? 0, key: `${own.key} [ckpt] interval` };
  const merged = read(tp.trainer_config);
  if (merged !== undefined) return { interval: merged, key: "trainer_process.trainer_config.ckpt.interval" };
  return { interval: tp.ckpt_interval, key: "trainer_process.ckpt_interval" };
}

/** A restarted trainer continues from a checkpoint: `max_restarts` needs some. */
function trainerProblems(ctx: ProcessContext): string[] {
  const { tp } = launchSections(ctx);
  if (tp.max_restarts === 0) return [];
  const ckpt = trainerCheckpointInterval(ctx);
  if (ckpt.interval !== 0) return [];
  return [
    `trainer_process.max_restarts = ${tp.max_restarts} needs trainer checkpoints, but ${ckpt.key} sets none; ` +
      `set ${ckpt.key} (e.g. 1) or max_restarts = 0`,
  ];
}

/**
 * The processes this plugin starts for the launcher (`launch.processes`): prime-rl's trainer for
 * `[trainer_process] kind = "prime-rl"`; prime-rl's server or stock `vllm serve` for `[inference] kind`.
 */
export const PRIME_RL_PROCESSES = {
  trainer_process: {
    "prime-rl": { spec: primeRlTrainerSpec, contextParallel, problems: trainerProblems } as ProcessKind,
  },
  inference: { "prime-rl": primeRlServer, vllm: vllmServer },
};
