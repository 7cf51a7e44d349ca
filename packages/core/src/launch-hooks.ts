import type { z } from "zod";
import type { AuditFindings } from "./audit-findings.ts";
import type { EventHandlers } from "./events.ts";
import type { WeightsRef } from "./types.ts";

/** One preflight check's outcome (`rl check`, `rl validate`): `skip` when it cannot be decided here. */
export interface CheckResult {
  name: string;
  status: "ok" | "fail" | "skip";
  message: string;
}

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

/**
 * What a plugin needs from the launcher, read before anything starts. Every field is optional; the launcher
 * acts on what is there and never reads a plugin's config by name.
 */
export interface PluginNeeds {
  /** Docker images its sandboxes run: preflight checks each is in the local image store (images are never pulled). */
  dockerImages?: string[];
  /** The TOML key that chooses those images, named when one is missing (default `[env] docker.image`). */
  dockerImagesKey?: string;
  /** URL of an OpenAI-compatible server it sends requests to: preflight checks it is the one the launcher starts. */
  inferenceUrl?: string;
  /**
   * How it loads new weights into the inference server: `full` needs prime-rl's `/pause` `/update_weights`
   * `/resume` (or SGLang's `/update_weights_from_disk`), `lora` an adapter route (stock vLLM has one).
   */
  weightUpdate?: "full" | "lora";
  /** A trainer process it hands batches to through files (prime-rl): where they meet, and the weights' kind. */
  trainerFiles?: { outputDir: string; runDir: string; weightsKind: "full" | "lora" };
  /**
   * Docker hosts besides the default engine where it creates containers labelled `air.run=<run dir>`: the
   * launcher's teardown, its reaper and `rl clean` remove them there too. TLS paths are absolute.
   */
  dockerHosts?: Array<{ url: string; tls?: { ca: string; cert: string; key: string } }>;
}

/** Where `rl`'s step lines go and how (a logger's `launch.stepLines`). */
export interface StepLineOptions {
  /** `[run] max_steps`, shown as `(done/total)`. */
  totalSteps?: number;
  /** `[orchestrator] batch_size`: the live bar's length. */
  rolloutsPerStep?: number;
  write: (text: string) => void;
  /** A terminal: one live line per step, redrawn. */
  tty: boolean;
}

/** The step lines' view: handlers for the run's bus, and what the launcher's log sink and teardown call. */
export interface StepLines {
  hooks: Partial<EventHandlers>;
  /** Clears the live line so a log line can be written. */
  clearLine(): void;
  /** Ends the live line (teardown). */
  finish(): void;
}

/** The trained model a run leaves (a trainer's `launch.finalWeights`): where it is, what it is, how to serve it. */
export interface FinalWeights {
  /** `<run dir>/final-weights`: the last finished broadcast, hard-linked (pruning never removes it). */
  dir: string;
  kind: "full" | "lora";
  /** Air step whose weights these are, and the trainer's output they came from. */
  step: number;
  source: string;
  /** true when the dir holds config.json (full) or adapter_config.json (LoRA) next to the weights. */
  loadable: boolean;
  /** A command that serves it. */
  serve: string;
}

/** What a trainer's end-of-run hook gets besides the launch context. */
export interface FinalWeightsContext extends LaunchContext {
  /** `[model] name`: the base model (its config and tokenizer files make full weights loadable). */
  modelName: string;
  /** The last step recorded in `<run dir>/progress.json`; undefined when none finished. */
  lastCompletedStep?: number;
  /** The launcher's environment (e.g. `HF_HOME`, where the base model's files are cached). */
  env: Record<string, string | undefined>;
}

/** The trainer processes the launcher starts (`[trainer_process]`), from which a trainer plugin derives settings. */
export interface TrainerWorld {
  /** Ranks per node (torchrun `--nproc-per-node`). */
  ranksPerNode: number;
  nnodes: number;
  /** The trainer's context parallel degree: the only non-data-parallel dimension. */
  cp: number;
  /** ranksPerNode × nnodes ÷ cp. */
  dataWorldSize: number;
  /** The TOML keys that set the trainer GPUs and cp, for messages. */
  gpuKey: string;
  cpKey: string;
  /** `[trainer_process] master_addr`: where the ranks of every node reach the orchestrator. */
  masterAddr: string;
}

/** What a trainer's run-dir hook gets besides the launch context. */
export interface RunDirContext extends LaunchContext {
  /** The air step the run starts at (> 0 on `--resume`). */
  startStep: number;
  /** `rl --resume`: keep what the steps before `startStep` left. */
  resume: boolean;
  /** `[trainer_process] node_rank`: a node other than 0 shares the master's output dir and must not clean it. */
  nodeRank: number;
}

/** What a trainer's run-dir hook did before its process starts. */
export interface PreparedRunDir {
  /** The trainer's own step taken by the last air step before `startStep` (undefined on a fresh start). */
  trainerStep?: number;
  /** The checkpoint step the trainer process resumes from (undefined: from the base weights). */
  resumeStep?: number;
  /** What was removed (stale steps, metrics rows, checkpoints), for the launcher's log. */
  removed: string[];
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

/**
 * Optional hooks through which a plugin tells the launcher what it needs. The launcher calls them with the
 * plugin's own validated config; core never calls them.
 */
export interface LaunchHooks<C> {
  /** Checks before a run (`rl validate` and `rl check`): e.g. task files exist. Must not start anything. */
  preflight?(config: C, ctx: LaunchContext): CheckResult[] | Promise<CheckResult[]>;
  /** What the plugin needs: images, a server, a trainer's files. */
  needs?(config: C, ctx: LaunchContext): PluginNeeds;
  /**
   * `rl validate`: loads the env's tasks from their files (no process, no image, no network), so a missing or
   * malformed task fails before a run. One `skip` result (saying which root) when the task root is not on this
   * machine (a config validated away from its checkout).
   */
  tasks?(config: C, ctx: LaunchContext): CheckResult[] | Promise<CheckResult[]>;
  /**
   * Policy: the server the launcher starts puts a router in front of its engine (prime-rl's default), so admin
   * calls (`/pause`, `/update_weights`, LoRA loads) must go to the engine, as prime-rl's `rl` sets the
   * orchestrator's `admin_base_url`. Fills in the plugin's own admin address in `config` (a copy the launcher
   * makes for its run plan; the user's config is never changed) and returns problems, each naming its keys.
   */
  routeAdmin?(config: C, server: { url: string; engineUrl: string }): string[];
  /**
   * Trainer: the weights a run resumed at `startStep` (> 0) starts from (the trainer's last finished output
   * before it); undefined: the base weights.
   */
  resumeWeights?(config: C, ctx: LaunchContext, startStep: number): WeightsRef | undefined;
  /**
   * Trainer: the values of its own config that follow from the trainer processes the launcher starts (as
   * prime-rl's `rl` derives them), each with why; the launcher fills them in, and an explicit value that
   * contradicts one is an `rl validate` error naming both keys.
   */
  derive?(config: C, world: TrainerWorld): Record<string, { value: unknown; why: string }>;
  /**
   * Trainer: the plugin's settings that the trainer process the launcher starts must match (prime-rl: version,
   * output dir, LoRA, rollout transport); the launcher reads them for `[trainer_process] kind`'s own config files.
   */
  processSettings?(config: C): Record<string, unknown>;
  /**
   * Trainer: prepares the run dir before the launcher starts the trainer process (a fresh start removes the
   * previous run's steps; a resume those past the resume point). Throws when the trainer could not continue.
   */
  prepareRunDir?(config: C, ctx: RunDirContext): PreparedRunDir;
  /**
   * Trainer: the checkpoint step a restarted trainer process resumes from (undefined: a fresh start from the base
   * weights), asked when the launcher restarts a crashed trainer (`[trainer_process] max_restarts`).
   */
  restartStep?(config: C, ctx: LaunchContext): number | undefined;
  /**
   * Trainer: called before a crashed trainer process is restarted, with the checkpoint step it resumes from
   * (`restartStep`'s answer): sets aside what the restarted trainer would rewrite in place while the inference
   * server may still load it (prime-rl: finished broadcasts from that step on). Returns the paths it moved.
   */
  beforeRestart?(config: C, ctx: LaunchContext, resumeStep: number | undefined): string[];
  /**
   * Trainer: why a restarted trainer process could not continue the run with this config, one message per reason
   * naming the TOML key (`rl validate` exits 2 when `max_restarts` > 0).
   */
  restartProblems?(config: C, ctx: LaunchContext): string[];
  /**
   * The processes this plugin starts for the launcher, by the value of the launcher's `kind` key that names
   * them (`trainer_process`: `[trainer_process] kind`; `inference`: `[inference] kind`). The launcher's built-in
   * table says which plugin starts which kind; it knows no process's argv or file format.
   */
  processes?: {
    trainer_process?: Record<string, ProcessKind>;
    inference?: Record<string, ProcessKind>;
  };
  /**
   * Logger: true when it prints the run's step lines on the terminal (the console logger). `rl` prints them itself
   * (its step-line logger: stdout, live on a terminal) and leaves such a logger out of the run, so a step shows once.
   */
  printsStepLines?(config: C): boolean;
  /**
   * Logger: the step lines `rl` prints on its own output, as a view the launcher runs on the run's bus (the
   * `step-line` logger has it; the launcher looks that logger up in its registry by name).
   */
  stepLines?(options: StepLineOptions): StepLines;
  /** Trainer: makes the trained model the run's deliverable once it ends; undefined when there is none. */
  finalWeights?(config: C, ctx: FinalWeightsContext): FinalWeights | undefined;
}
