import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ProcessContext, ProcessKind, ProcessSpec, ProcessStart } from "@air/core";
import { checkpointDisk } from "./ckpt-size.ts";
import { seqLen } from "./derive.ts";
import { type PrimeRlTrainerSection, primeRlTrainerSection } from "./launch-sections.ts";
import { primeRlTorchrunArgv, primeRlTrainerEnv } from "./prime-rl-argv.ts";
import { primeRlServer, vllmServer } from "./servers.ts";
import { contextParallel, modelKey, trainerCheckpointInterval } from "./trainer-keys.ts";
import { primeRlPaths, primeRlSettings, primeRlTrainerToml, withResumeStep } from "./trainer-toml.ts";

type TrainerContext = ProcessContext<PrimeRlTrainerSection>;

/**
 * prime-rl's trainer: it writes (or takes, `config_file`) prime-rl's trainer TOML and runs `torchrun ... -m
 * <module> @ <toml>` (module: prime_rl.trainer.rl.train, or the CPU stand-in air_tiny.trainer) or, with `launch
 * = "entrypoint"`, `<command> @ <toml>` (prime-rl's `trainer`). A user's `config_file` is used as is, except when
 * resuming: then a copy with the resume step (`withResumeStep`) under `<run dir>/configs/` (the file is never
 * written).
 */
export function primeRlTrainerSpec(ctx: ProcessStart<PrimeRlTrainerSection>): ProcessSpec {
  const { section: own, trainerProcess: tp, run } = ctx;
  const version = primeRlPaths(ctx).version;
  const files: ProcessSpec["files"] = [];
  const generated = join(ctx.runDir, "configs", "trainer.toml");
  let file = generated;
  // Node 0 writes the file every node's ranks read (a worker reads the master's: one resume step for all ranks).
  const owner = "master" as const;
  if (!own.config_file)
    files.push({ path: file, text: primeRlTrainerToml(ctx, { resumeStep: ctx.resumeStep }), owner });
  else {
    const user = resolve(ctx.configDir, own.config_file);
    if (ctx.resumeStep === undefined) file = user;
    else
      files.push({
        path: file,
        text: withResumeStep(readFileSync(user, "utf8"), version, ctx.resumeStep, user),
        owner,
      });
  }
  if (own.launch === "entrypoint") {
    // One process without torchrun: give init_process_group the single-rank environment torchrun would.
    const single = { masterAddr: tp.master_addr, masterPort: tp.master_port };
    const env = primeRlTrainerEnv(version, ctx.gpuIds, tp.env, single);
    return { argv: [...(tp.command ?? ["trainer"]), "@", file, ...tp.extra_args], env, files };
  }
  const argv = primeRlTorchrunArgv(version, {
    command: tp.command,
    module: own.module,
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

/**
 * What the trainer process cannot run: `max_restarts` without checkpoints; `launch = "entrypoint"` (one process)
 * on several nodes; a `[model] seq_len` that contradicts the run's one seq_len (the packing bin size).
 */
function trainerProblems(ctx: TrainerContext): string[] {
  const { section: own, trainerProcess: tp } = ctx;
  const problems: string[] = [];
  const ckpt = trainerCheckpointInterval(ctx);
  if (tp.max_restarts > 0 && ckpt.interval === 0)
    problems.push(
      `trainer_process.max_restarts = ${tp.max_restarts} needs trainer checkpoints, but ${ckpt.key} sets none; ` +
        `set ${ckpt.key} (e.g. 1) or max_restarts = 0`,
    );
  if (own.launch === "entrypoint" && tp.nnodes > 1)
    problems.push(
      `trainer_process.launch: "entrypoint" starts one trainer process, which cannot span trainer_process.nnodes = ${tp.nnodes}; use launch = "torchrun"`,
    );
  const derived = seqLen(primeRlSettings(ctx), ctx.model.max_model_len);
  const given = modelKey(ctx, "seq_len");
  if (given.value !== undefined && given.value !== derived.value)
    problems.push(
      `${given.key} = ${JSON.stringify(given.value)} contradicts ${derived.key} = ${derived.value} (the packing bin size: one seq_len, as prime-rl's rl shares it); remove ${given.key} or set ${derived.key}`,
    );
  else if (own.config_file && given.value === undefined)
    problems.push(
      `${given.key} is not set, so prime-rl's default (2048) would differ from ${derived.key} = ${derived.value} (the packing bin size); set it to ${derived.value}`,
    );
  return problems;
}

/** The trainer's ranks: torchrun starts one per GPU and meets at the rendezvous; the entrypoint is one process. */
function ranks(ctx: TrainerContext, gpus: number): { perNode: number; rendezvous: boolean } {
  return ctx.section.launch === "entrypoint"
    ? { perNode: 1, rendezvous: false }
    : { perNode: Math.max(1, gpus), rendezvous: true };
}

/** `[trainer_process] kind = "prime-rl"`: prime-rl's trainer (or the CPU stand-in), its own keys typed. */
export const primeRlTrainer: ProcessKind<PrimeRlTrainerSection> = {
  section: primeRlTrainerSection,
  spec: primeRlTrainerSpec,
  problems: trainerProblems,
  contextParallel,
  ranks,
  disk: (ctx, env) => checkpointDisk(ctx, env),
};

/**
 * The processes this plugin starts for the launcher (`launch.processes`): prime-rl's trainer for
 * `[trainer_process] kind = "prime-rl"`; prime-rl's server or stock `vllm serve` for `[inference] kind`.
 */
export const PRIME_RL_PROCESSES = {
  trainer_process: { "prime-rl": primeRlTrainer },
  inference: { "prime-rl": primeRlServer, vllm: vllmServer },
};
