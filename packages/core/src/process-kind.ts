import type { z } from "zod";
import type { AuditFindings } from "./audit-findings.ts";

/** What a plugin's launch hooks get: where the config lives and what the launcher decided. */
export interface LaunchContext {
  /** Directory of the TOML file (relative paths in a plugin's config are relative to it). */
  configDir: string;
  /** The run's directory. */
  runDir: string;
  /** Base URL of the inference server the launcher starts, when it starts one. */
  inferenceUrl?: string;
  /** `[model] name`: the model the run's requests name (a server that serves another answers 404). */
  modelName?: string;
  /** The latest audit's findings, as `PluginContext.audit` (preflight: refuse forgeable tasks, show the noise). */
  readonly audit?: AuditFindings;
}

/** The launcher's own keys of `[inference]`, whatever the kind (`command`, `env`: "./…" resolved). */
export interface ServerProcessKeys {
  kind: string;
  host: string;
  port: number;
  command?: string[];
  extra_args: string[];
  env: Record<string, string>;
}

/** The launcher's own keys of `[trainer_process]`, whatever the kind (`command`, `env`: "./…" resolved). */
export interface TrainerProcessKeys {
  kind: string;
  command?: string[];
  extra_args: string[];
  env: Record<string, string>;
  nnodes: number;
  node_rank: number;
  master_addr: string;
  master_port: number;
  max_restarts: number;
}

/**
 * What a process kind reads: the launcher's own keys of `[trainer_process]` and `[inference]`, the kind's own
 * keys of its section as its `section` schema outputs them (`S`), `[model]`, `[run]`, and the settings of the
 * run's trainer plugin the process must match.
 */
export interface ProcessContext<S = Record<string, unknown>> extends LaunchContext {
  /** The TOML file, for messages. */
  configFile: string;
  trainerProcess: TrainerProcessKeys;
  inference: ServerProcessKeys;
  /** This kind's own keys of its section (`[trainer_process]` or `[inference]`), validated by `section`. */
  section: S;
  model: { name: string; max_model_len?: number };
  run: { name: string; seed: number };
  /** The role's GPUs as `[deployment]` sets them (count 0: none given) and the key that sets them. */
  gpus: { count: number; key: string };
  /** The run's trainer plugin's `launch.processSettings` ({} when it has none: the process kind's defaults). */
  trainerSettings: Record<string, unknown>;
  /** Inference: how the run's policy loads new weights into this server (its `launch.needs`). */
  weightUpdate?: "full" | "lora";
  /** Inference: whether the launcher starts a trainer process beside the server. */
  trains: boolean;
}

/** What a process kind's `spec` gets: the context, the GPUs the launcher gave the role, and the resume point. */
export interface ProcessStart<S = Record<string, unknown>> extends ProcessContext<S> {
  /** GPU ids for CUDA_VISIBLE_DEVICES (none with `[deployment] device = "cpu"`). */
  gpuIds: number[];
  /** GPUs the role was given (on CPU: how many processes; ranks, tensor parallel size). */
  gpuCount: number;
  /** Trainer: the checkpoint step to resume from (undefined: the base weights). */
  resumeStep?: number;
}

/** A process as its plugin declares it; the launcher writes `files`, starts `argv`, supervises and stops it. */
export interface ProcessSpec {
  argv: string[];
  /** Its environment on top of the launcher's own (the user's `env` already layered in). */
  env: Record<string, string>;
  /**
   * Config files written before it starts: absolute path → text. The launcher writes each atomically (a
   * temporary file, then a rename); `owner: "master"` files only on trainer node 0 (a worker reads the master's).
   */
  files: Array<{ path: string; text: string; owner?: "master" }>;
}

/** Disk a process keeps under `dir` at most, estimated before it starts (`rl check` compares it with what is free). */
export interface DiskEstimate {
  dir: string;
  bytes: number;
  /** How it was estimated, for the check's line. */
  how: string;
  /** The TOML keys that change it, for the refusal. */
  keys: string[];
}

/**
 * One kind of process the launcher starts (`[trainer_process] kind`, `[inference] kind`): the plugin declares
 * its own keys of the section (`section`, a strict zod object: the launcher's schema is built from the kinds it
 * knows), the command, environment and config files; the launcher owns ports, health checks, restarts and
 * teardown.
 */
export interface ProcessKind<S = Record<string, unknown>> {
  /** The kind's own keys beside the launcher's (`ServerProcessKeys` / `TrainerProcessKeys`), strict. */
  section: z.ZodType<S>;
  spec(ctx: ProcessStart<S>): ProcessSpec;
  /** Why this process could not run the config, one message per reason naming the TOML keys (exit 2). */
  problems?(ctx: ProcessContext<S>): string[];
  /** Inference: the engine's port when a router in front of it takes the server's port; undefined: no router. */
  enginePort?(ctx: ProcessContext<S>): number | undefined;
  /** Inference: the share of each of its GPUs' memory the server takes (preflight checks it is free). */
  gpuMemoryFraction?(ctx: ProcessContext<S>): number;
  /** Trainer: its non-data-parallel (context parallel) size as its config sets it, and the key that sets it. */
  contextParallel?(ctx: ProcessContext<S>): { cp: number; key: string };
  /**
   * Trainer: ranks per node for `gpus` trainer GPUs, and whether they meet at `master_addr:master_port`
   * (torchrun's rendezvous); default: one rank per GPU, with a rendezvous.
   */
  ranks?(ctx: ProcessContext<S>, gpus: number): { perNode: number; rendezvous: boolean };
  /** Trainer: the disk its checkpoints keep at most (the launcher's environment, e.g. `HF_HOME`). */
  disk?(ctx: ProcessContext<S>, env: Record<string, string | undefined>): DiskEstimate | undefined;
}
