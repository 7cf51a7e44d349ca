import { join, resolve } from "node:path";
import type { ProcessContext, ProcessKind, ProcessStart } from "@air/core";
import TOML from "@iarna/toml";
import {
  type PrimeRlServerSection,
  primeRlServerSection,
  type VllmServerSection,
  vllmServerSection,
} from "./launch-sections.ts";
import { primeRlInferenceDoc, primeRlInferenceEnv, vllmTrainingArgs } from "./prime-rl-argv.ts";
import { primeRlPaths } from "./trainer-toml.ts";

/** prime-rl's `backend_port`: where the engine listens behind its router (default: port + 100, as prime-rl). */
function engineBackendPort(ctx: ProcessContext<PrimeRlServerSection>): number {
  return ctx.section.backend_port ?? ctx.inference.port + 100;
}

/**
 * The `vllm serve` command for `[inference]`: model, host, port, max-model-len, tensor parallelism over
 * the inference GPUs, LoRA flags, extra args.
 * @example vllmServeArgv(ctx)
 */
export function vllmServeArgv(ctx: ProcessStart<VllmServerSection>): string[] {
  const { section: own, inference: inf, model, run } = ctx;
  const maxLen = own.max_model_len ?? model.max_model_len;
  const tp = own.tensor_parallel_size ?? Math.max(1, ctx.gpuCount);
  const argv = [...(inf.command ?? ["vllm"]), "serve", own.model ?? model.name, "--host", inf.host];
  argv.push("--port", String(inf.port), "--gpu-memory-utilization", String(own.gpu_memory_utilization));
  argv.push("--tensor-parallel-size", String(tp), "--seed", String(run.seed));
  if (maxLen !== undefined) argv.push("--max-model-len", String(maxLen));
  if (own.served_model_name) argv.push("--served-model-name", own.served_model_name);
  if (own.dtype) argv.push("--dtype", own.dtype);
  if (own.lora.enabled) {
    argv.push("--enable-lora", "--max-lora-rank", String(own.lora.max_rank));
    argv.push("--max-loras", String(own.lora.max_loras));
    const modules = Object.entries(own.lora.modules).map(
      ([name, path]) => `${name}=${resolve(ctx.configDir, path)}`,
    );
    if (modules.length > 0) argv.push("--lora-modules", ...modules);
  }
  return [...argv, ...vllmTrainingArgs(inf.extra_args), ...inf.extra_args];
}

/** prime-rl's inference TOML (`inference @ file`) for `[inference]`. */
export function primeRlInferenceToml(ctx: ProcessStart<PrimeRlServerSection>): string {
  const { section: own, inference: inf, model, run } = ctx;
  const doc = primeRlInferenceDoc(primeRlPaths(ctx).version, {
    model: own.model ?? model.name,
    maxModelLen: own.max_model_len ?? model.max_model_len,
    host: inf.host,
    port: inf.port,
    gpuMemoryUtilization: own.gpu_memory_utilization,
    seed: run.seed,
    tensorParallel: own.tensor_parallel_size ?? Math.max(1, ctx.gpuCount),
    dtype: own.dtype,
    lora: own.lora.enabled ? { maxRank: own.lora.max_rank, maxLoras: own.lora.max_loras } : null,
    router: own.router ? { backendPort: engineBackendPort(ctx) } : undefined,
  });
  return TOML.stringify(doc as TOML.JsonMap);
}

/** The server's environment as prime-rl's `rl` sets it (stock vLLM gets the same). */
function serverEnv(ctx: ProcessStart): Record<string, string> {
  return primeRlInferenceEnv(primeRlPaths(ctx).version, ctx.gpuIds, ctx.inference.env);
}

/**
 * Inference GPUs that the engine cannot split: with `tensor_parallel_size` set, the inference GPUs must be a
 * multiple of it (prime-rl's `rl`: "Number of inference GPUs must be divisible by the tensor parallel size").
 */
function parallelProblems(ctx: ProcessContext<VllmServerSection>): string[] {
  const tp = ctx.section.tensor_parallel_size;
  if (tp === undefined || ctx.gpus.count === 0 || ctx.gpus.count % tp === 0) return [];
  return [
    `inference.tensor_parallel_size = ${tp} must divide the ${ctx.gpus.count} inference GPU(s) of ${ctx.gpus.key}`,
  ];
}

/**
 * Stock `vllm serve` has no prime-rl `/pause`, `/update_weights`, `/resume`: a policy that reloads full weights
 * after every step (`weight_update = "full"`) cannot run against it while a trainer trains.
 */
function stockVllmProblems(ctx: ProcessContext<VllmServerSection>): string[] {
  const problems = parallelProblems(ctx);
  if (ctx.trains && ctx.weightUpdate === "full")
    problems.push(
      'inference.kind: stock `vllm serve` ("vllm") has no /pause, /update_weights, /resume, which the policy\'s ' +
        'weight_update = "full" calls after every step; use kind = "prime-rl" (its server has them) or ' +
        '[policy] weight_update = "lora" with [inference.lora] enabled = true',
    );
  return problems;
}

/** `[inference] kind = "vllm"`: stock `vllm serve` with what prime-rl's trainer assumes. */
export const vllmServer: ProcessKind<VllmServerSection> = {
  section: vllmServerSection,
  spec: (ctx) => {
    const env = serverEnv(ctx);
    if (ctx.section.lora.enabled) env.VLLM_ALLOW_RUNTIME_LORA_UPDATING ??= "True";
    return { argv: vllmServeArgv(ctx), env, files: [] };
  },
  problems: stockVllmProblems,
  gpuMemoryFraction: (ctx) => ctx.section.gpu_memory_utilization,
};

/**
 * `[inference] kind = "prime-rl"`: `<command> @ <run dir>/configs/inference.toml` (command: prime-rl's
 * `inference`, or the CPU stand-in packages/tiny/bin/inference); with `router = true` the engine moves to
 * `backend_port`.
 */
export const primeRlServer: ProcessKind<PrimeRlServerSection> = {
  section: primeRlServerSection,
  spec: (ctx) => {
    const path = join(ctx.runDir, "configs", "inference.toml");
    return {
      argv: [...(ctx.inference.command ?? ["inference"]), "@", path, ...ctx.inference.extra_args],
      env: serverEnv(ctx),
      files: [{ path, text: primeRlInferenceToml(ctx) }],
    };
  },
  problems: parallelProblems,
  enginePort: (ctx) => (ctx.section.router ? engineBackendPort(ctx) : undefined),
  gpuMemoryFraction: (ctx) => ctx.section.gpu_memory_utilization,
};
