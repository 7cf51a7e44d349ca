import type { EventHandlers } from "./events.ts";
import type { LaunchContext, ProcessKind } from "./process-kind.ts";
import type { WeightsRef } from "./types.ts";

export type {
  DiskEstimate,
  LaunchContext,
  ProcessContext,
  ProcessKind,
  ProcessSpec,
  ProcessStart,
  ServerProcessKeys,
  TrainerProcessKeys,
} from "./process-kind.ts";

/** One preflight check's outcome (`rl check`, `rl validate`): `skip` when it cannot be decided here. */
export interface CheckResult {
  name: string;
  status: "ok" | "fail" | "skip";
  message: string;
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
