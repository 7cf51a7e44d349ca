import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import TOML from "@iarna/toml";
import type { GpuMap } from "./gpus.ts";
import { cudaIds, localCommand, localEnv } from "./local-paths.ts";
import {
  primeRlInferenceDoc,
  primeRlInferenceEnv,
  primeRlTorchrunArgv,
  primeRlTrainerEnv,
  vllmTrainingArgs,
} from "./prime-rl-argv.ts";
import type { RunConfig } from "./sections.ts";
import type { ChildSpec } from "./supervisor.ts";
import { primeRlPaths, primeRlTrainerToml } from "./trainer-toml.ts";

/** Host a client uses to reach a server bound to `host`. */
export function clientHost(host: string): string {
  return host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host;
}

/** prime-rl's `backend_port`: where the engine listens behind its router (default: port + 100, as prime-rl). */
export function engineBackendPort(config: RunConfig): number {
  const { inference } = config.root;
  return inference.backend_port ?? inference.port + 100;
}

/**
 * Base URL (no `/v1`) where the admin routes (`/pause`, `/update_weights`, LoRA loads) reach the engine the
 * launcher starts: behind prime-rl's router the engine's own port, else the server itself.
 * @example engineBaseUrl(config) // "http://127.0.0.1:8100"
 */
export function engineBaseUrl(config: RunConfig): string {
  const { inference } = config.root;
  if (inference.kind === "prime-rl" && inference.router)
    return `http://${clientHost(inference.host)}:${engineBackendPort(config)}`;
  return inferenceBaseUrl(config);
}

/** Base URL of the inference server (no trailing slash, no `/v1`). */
export function inferenceBaseUrl(config: RunConfig): string {
  const { inference } = config.root;
  if (inference.kind === "external") return (inference.url ?? "").replace(/\/+$/, "").replace(/\/v1$/, "");
  return `http://${clientHost(inference.host)}:${inference.port}`;
}

function configsDir(runDir: string): string {
  const dir = join(runDir, "configs");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * The `vllm serve` command for `[inference]`: model, host, port, max-model-len, tensor parallelism over
 * the inference GPUs, LoRA flags, extra args.
 * @example vllmServeArgv(config, { inference: [0], trainer: [1], env: [] })
 */
export function vllmServeArgv(config: RunConfig, gpus: GpuMap): string[] {
  const { inference: inf } = config.root;
  const model = inf.model ?? config.root.model.name;
  const maxLen = inf.max_model_len ?? config.root.model.max_model_len;
  const tp = inf.tensor_parallel_size ?? Math.max(1, gpus.inference.length);
  const argv = [
    ...(localCommand(config, inf.command) ?? ["vllm"]),
    "serve",
    model,
    "--host",
    inf.host,
    "--port",
    String(inf.port),
  ];
  argv.push("--gpu-memory-utilization", String(inf.gpu_memory_utilization));
  argv.push("--tensor-parallel-size", String(tp), "--seed", String(config.root.run.seed));
  if (maxLen !== undefined) argv.push("--max-model-len", String(maxLen));
  if (inf.served_model_name) argv.push("--served-model-name", inf.served_model_name);
  if (inf.dtype) argv.push("--dtype", inf.dtype);
  if (inf.lora.enabled) {
    argv.push("--enable-lora", "--max-lora-rank", String(inf.lora.max_rank));
    argv.push("--max-loras", String(inf.lora.max_loras));
    const modules = Object.entries(inf.lora.modules).map(
      ([name, path]) => `${name}=${resolve(config.dir, path)}`,
    );
    if (modules.length > 0) argv.push("--lora-modules", ...modules);
  }
  return [...argv, ...vllmTrainingArgs(inf.extra_args), ...inf.extra_args];
}

/** prime-rl's inference TOML (`inference @ file`) for `[inference]`. */
export function primeRlInferenceToml(config: RunConfig, gpus: GpuMap): string {
  const { inference: inf } = config.root;
  const doc = primeRlInferenceDoc(primeRlPaths(config).version, {
    model: inf.model ?? config.root.model.name,
    maxModelLen: inf.max_model_len ?? config.root.model.max_model_len,
    host: inf.host,
    port: inf.port,
    gpuMemoryUtilization: inf.gpu_memory_utilization,
    seed: config.root.run.seed,
    tensorParallel: inf.tensor_parallel_size ?? Math.max(1, gpus.inference.length),
    dtype: inf.dtype,
    lora: inf.lora.enabled ? { maxRank: inf.lora.max_rank, maxLoras: inf.lora.max_loras } : null,
    router: inf.router ? { backendPort: engineBackendPort(config) } : undefined,
  });
  return TOML.stringify(doc as TOML.JsonMap);
}

/**
 * The inference child for `[inference]`, or undefined for `kind = "external"`. Writes the generated
 * config files it needs under `<runDir>/configs/`. `kind = "prime-rl"` runs `<command> @ inference.toml`
 * (command: prime-rl's `inference`, or the CPU stand-in packages/tiny/bin/inference).
 */
export async function inferenceChild(config: RunConfig, gpus: GpuMap): Promise<ChildSpec | undefined> {
  const { inference: inf } = config.root;
  if (inf.kind === "external") return undefined;
  const base = inferenceBaseUrl(config);
  const paths = inf.health_paths.map((p) => (p.startsWith("/") ? p : `/${p}`));
  const engine = engineBaseUrl(config);
  const common = {
    role: "inference",
    // behind a router: the router's answers, and the engine's own (the admin calls go there)
    healthUrls: [
      ...paths.map((p) => `${base}${p}`),
      ...(engine === base ? [] : paths.map((p) => `${engine}${p}`)),
    ],
    startupTimeoutMs: inf.startup_timeout_ms,
  };
  const serverEnv = primeRlInferenceEnv(
    primeRlPaths(config).version,
    cudaIds(config, gpus.inference),
    localEnv(config, inf.env),
  );
  if (inf.kind === "vllm") {
    if (inf.lora.enabled) serverEnv.VLLM_ALLOW_RUNTIME_LORA_UPDATING ??= "True";
    return { ...common, argv: vllmServeArgv(config, gpus), env: serverEnv };
  }
  const file = join(configsDir(config.runDir), "inference.toml");
  writeFileSync(file, primeRlInferenceToml(config, gpus));
  return {
    ...common,
    argv: [...(localCommand(config, inf.command) ?? ["inference"]), "@", file, ...inf.extra_args],
    env: serverEnv,
  };
}

/**
 * The trainer child for `[trainer_process]`, or undefined for `kind = "none"`. It writes (or takes) prime-rl's
 * trainer TOML and runs `torchrun ... -m <module> @ <toml>` (module: prime_rl.trainer.rl.train, or the CPU
 * stand-in air_tiny.trainer) or, with `launch = "entrypoint"`, `<command> @ <toml>` (prime-rl's `trainer`).
 */
export async function trainerChild(
  config: RunConfig,
  gpus: GpuMap,
  resume: { primeStep?: number } = {},
): Promise<ChildSpec | undefined> {
  const { trainer_process: tp } = config.root;
  if (tp.kind === "none") return undefined;
  const common = { role: "trainer", startupTimeoutMs: tp.startup_timeout_ms, exitZeroOk: true };
  const userEnv = localEnv(config, tp.env);
  const ids = cudaIds(config, gpus.trainer);
  const command = localCommand(config, tp.command);
  let file: string;
  if (tp.config_file) file = resolve(config.dir, tp.config_file);
  else {
    file = join(configsDir(config.runDir), "trainer.toml");
    writeFileSync(file, await primeRlTrainerToml(config, { resumeStep: resume.primeStep }));
  }
  const version = primeRlPaths(config).version;
  if (tp.launch === "entrypoint") {
    // One process without torchrun: give init_process_group the single-rank environment torchrun would.
    const single = { masterAddr: tp.master_addr, masterPort: tp.master_port };
    const singleEnv = primeRlTrainerEnv(version, ids, userEnv, single);
    return { ...common, argv: [...(command ?? ["trainer"]), "@", file, ...tp.extra_args], env: singleEnv };
  }
  const argv = primeRlTorchrunArgv(version, {
    command,
    module: tp.module,
    nnodes: tp.nnodes,
    nodeRank: tp.node_rank,
    masterAddr: tp.master_addr,
    masterPort: tp.master_port,
    rdzvId: config.root.run.name,
    logDir: join(config.runDir, "logs", "torchrun"),
    nprocPerNode: Math.max(1, gpus.trainer.length),
    tomlFile: file,
    extraArgs: tp.extra_args,
  });
  return { ...common, argv, env: primeRlTrainerEnv(version, ids, userEnv) };
}
