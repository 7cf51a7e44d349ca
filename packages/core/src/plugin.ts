import type { z } from "zod";
import type { AuditFindings } from "./audit-findings.ts";
import type { EventHandlers } from "./events.ts";
import type { LaunchHooks } from "./launch-hooks.ts";
import type { Logger } from "./log.ts";
import type { EnvState, RecordedRollout } from "./loop/resume.ts";
import type {
  Action,
  Batch,
  Example,
  Generation,
  Group,
  Message,
  Sample,
  StepResult,
  Trajectory,
  WeightsRef,
} from "./types.ts";

export const PLUGIN_KINDS = [
  "env",
  "reward",
  "advantage",
  "strategy",
  "policy",
  "trainer",
  "logger",
] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/** What every plugin gets besides its config. */
export interface PluginContext {
  /** Logger labelled with the plugin's name. */
  log: Logger;
  /** The run's directory (`<output_dir>/<run name>`). */
  runDir: string;
  /** Directory of the TOML file, for resolving relative paths in plugin config. */
  configDir: string;
  runName: string;
  seed: number;
  /** Model name from `[model] name`. */
  modelName: string;
  /** `[model] max_model_len`, when the config sets it. */
  maxModelLen?: number;
  /** `orchestrator.max_turns`: the most turns a rollout gets (envs show the remaining steps from it). */
  maxTurns?: number;
  /**
   * Base URL of the inference server the launcher started (`[inference]`), when it started one; a policy plugin
   * may use it when its own config names no server.
   */
  inferenceUrl?: string;
  /** GPUs the launcher set aside for sandboxes (`[deployment] env_gpu_ids`); an env may hand them to its sandboxes. */
  envGpuIds?: number[];
  /** True in an evaluation (`eval`): nothing is trained, so a policy needs no token ids or logprobs. */
  evaluation?: boolean;
  /**
   * Set when the launcher resumes a run (`rl --resume`) at `startStep`: a logger continues the run it recorded
   * in this run dir instead of starting a new one (the sqlite store drops the interrupted steps' rows first).
   */
  resume?: {
    startStep: number;
    /** `orchestrator.resume_rollouts` (and not a tree run): the store keeps the resumed steps' rollouts to continue. */
    rollouts?: boolean;
  };
  /**
   * What the latest audit of this config found (evaluation noise per task, forgeable tasks), read once by the
   * launcher from the run's store; undefined when the run was never audited.
   */
  readonly audit?: AuditFindings;
  /** Aborted when the run stops; long waits should listen to it. */
  signal: AbortSignal;
  /** Emits an event on the run's bus (e.g. a runtime reporting container state). */
  emit: <K extends keyof EventHandlers>(name: K, payload: Parameters<EventHandlers[K]>[0]) => void;
}

/** Hooks every plugin instance may return; they are subscribed to the run's event bus. */
export interface PluginBase {
  hooks?: Partial<EventHandlers>;
  /** Release processes, containers, files. Called once at shutdown. */
  close?(): Promise<void> | void;
  /**
   * Counters since the last call, merged into the step's metrics as `<plugin name>/<key>` (e.g. request errors).
   * Called once per step, when the step's batch is built.
   */
  stepMetrics?(): Record<string, number>;
  /**
   * A logger that keeps a run store, on `rl --resume`: the rollouts of the resumed steps it recorded with a resume
   * point on their last turn (they continue there instead of starting over). Read once, before the first rollout.
   */
  recordedRollouts?(): RecordedRollout[];
  /**
   * A logger that keeps a run store, on `rl --resume`: whether it recorded the end of the eval after step `step`
   * (eval:end). False: the eval was cut short (or never started), the loop runs it again first; its rollouts the
   * store kept are among `recordedRollouts()`.
   */
  evalRecorded?(step: number): boolean;
}

/** One open episode of an example, owned by one rollout. */
export interface EnvSession {
  /** Messages that start the conversation (system prompt, task description). */
  start(): Promise<Message[]>;
  step(action: Generation["action"]): Promise<StepResult>;
  /** Called when the rollout ends without the env saying done (max turns): e.g. auto-submit. */
  finish?(): Promise<StepResult | undefined>;
  /**
   * The text the policy re-asks an unparseable reply with, when the env prescribes it (env-mlgym with
   * `aci = "mlgym"`: the agent config's format error, shown verbatim as MLGym does). Passed on in `GenerateRequest`.
   */
  readonly formatErrorMessage?: string;
  /**
   * Reads a reply's command as the env's own agent would (env-mlgym with `aci = "mlgym"`: the agent config's
   * `output_parser`); a reply it cannot read has `parseError`. Passed on in `GenerateRequest`.
   */
  parseReply?(text: string): Action;
  close(): Promise<void>;
  /**
   * A new, independent session in this session's state now (tree rollouts, `[orchestrator.tree]`): the same
   * workspace, directory, open file and step count; what either does afterwards is not seen by the other. The
   * caller closes both. Optional: an env whose sessions cannot fork leaves it out and does not set `canFork`.
   * `info.rolloutId`: the tree node the fork plays; what the fork's `saveState` stores goes under that id (`keepStates`).
   * @example const sibling = await session.fork!({ rolloutId: "s0-r5" }); await sibling.step(action); await sibling.close();
   */
  fork?(info?: { rolloutId: string }): Promise<EnvSession>;
  /**
   * The session's state after turn `turnIndex` (`orchestrator.resume_rollouts`): e.g. a sandbox snapshot handle, the
   * open file, counters. Recorded beside the turn; `Environment.restore` continues from it in another process.
   * @example const state = await session.saveState!(3); // { snapshot: {...}, step: 4, openFile: "train.py" }
   */
  saveState?(turnIndex: number): Promise<EnvState>;
  /** The rollout ended (not aborted): what `saveState` stored for it (snapshots) may go. */
  dropState?(): Promise<void>;
}

export interface Environment extends PluginBase {
  /** Examples for a split; the loop cycles through them in order. */
  examples(split: "train" | "eval"): Promise<Example[]>;
  open(example: Example, info: { rolloutId: string; signal: AbortSignal }): Promise<EnvSession>;
  /**
   * A session in the state `saveState` recorded (`rl --resume`), ready for its next `step` (no `start`). Throws when
   * that state cannot be restored (e.g. its snapshot is gone): the loop then starts the rollout over, with a warning.
   */
  restore?(
    example: Example,
    info: { rolloutId: string; signal: AbortSignal; state: EnvState },
  ): Promise<EnvSession>;
  /**
   * On `rl --resume`, before the first rollout: what `saveState` stored for rollouts other than `rolloutIds` (those
   * the loop continues) will never be read again and may go (e.g. snapshots of turns the store never recorded).
   */
  keepStates?(rolloutIds: string[]): Promise<void>;
  /**
   * What `saveState` stored for these rollouts may go: on `rl --resume`, tree nodes taken as recorded (branched or
   * finished, no session opened for them), once their step is trained.
   */
  dropStates?(rolloutIds: string[]): Promise<void>;
  /** True when every session it opens implements `fork()`; tree rollouts refuse an env without it at start. */
  readonly canFork?: boolean;
  /**
   * False when its sessions never report scores (validate/submit), e.g. a dataset env with rubric rewards: the
   * loop then leaves `rollout/no_score_frac` out of the step metrics (it would read "every rollout failed to score").
   */
  readonly scores?: boolean;
}

/** Per-turn and total reward of one trajectory. `turns[i]` belongs to `trajectory.turns[i]`. */
export interface RewardResult {
  turns: number[];
  /** Trajectory total; defaults to the sum of `turns`. */
  total?: number;
  metrics?: Record<string, number>;
}

export interface RewardFunction extends PluginBase {
  score(trajectory: Trajectory): Promise<RewardResult> | RewardResult;
}

/** Advantages per trajectory and turn, aligned with `groups[g].trajectories[t].turns[i]`. */
export interface AdvantageResult {
  values: number[][][];
  metrics: Record<string, number>;
}

export interface AdvantageEstimator extends PluginBase {
  compute(groups: Group[]): AdvantageResult;
}

export interface SampleResult {
  samples: Sample[];
  metrics?: Record<string, number>;
}

export interface TrajectoryStrategy extends PluginBase {
  /** Turn a finished, rewarded trajectory into training samples (advantages left at 0). */
  toSamples(trajectory: Trajectory): SampleResult;
}

export interface GenerateRequest {
  messages: Message[];
  rolloutId: string;
  turnIndex: number;
  signal: AbortSignal;
  /**
   * The env's own text to re-ask a reply no command could be taken from (MLGym's agent config
   * `format_error_template`), from `EnvSession.formatErrorMessage`; when absent the policy uses its own wording.
   */
  formatErrorMessage?: string;
  /** The env's own reading of a reply (`EnvSession.parseReply`); when given, the policy parses with it instead of its own. */
  parseReply?: (text: string) => Action;
  /** How many of `messages` the env's `start()` gave (system prompt, demonstrations, task): history trimming keeps them. */
  initialMessages?: number;
  /**
   * The rollout's previous turn: its prompt ids and the `Generation.promptCursor` the policy returned with them.
   * A policy whose server sends every prompt id each turn may read only the ids after these (vLLM's
   * `return_token_ids`); it must return the same ids either way.
   */
  previousPrompt?: { ids: ArrayLike<number>; cursor: unknown };
}

export interface Policy extends PluginBase {
  generate(request: GenerateRequest): Promise<Generation>;
  /** Load new weights; later generations carry `weights.version`. */
  loadWeights?(weights: WeightsRef): Promise<void>;
  /** Version of the weights generations currently come from. */
  readonly version: number;
  /** False when replies are never parsed for a command (a parse error cannot happen): `rollout/parse_error_frac` is left out. */
  readonly parses?: boolean;
}

export interface TrainResult {
  metrics?: Record<string, number>;
}

export interface Trainer extends PluginBase {
  /** Hand a batch to the trainer. Resolves once it is accepted (not necessarily trained). */
  submit(batch: Batch): Promise<void>;
  /** Resolves with the weights trained on batch `step` (version step + 1), or null for a trainer that trains nothing. */
  waitForWeights(step: number, signal: AbortSignal): Promise<(WeightsRef & TrainResult) | null>;
}

export type LoggerPlugin = PluginBase;

export interface PluginInstances {
  env: Environment;
  reward: RewardFunction;
  advantage: AdvantageEstimator;
  strategy: TrajectoryStrategy;
  policy: Policy;
  trainer: Trainer;
  logger: LoggerPlugin;
}

export interface PluginDefinition<K extends PluginKind = PluginKind, S extends z.ZodType = z.ZodType> {
  name: string;
  kind: K;
  /** Validates the plugin's TOML section (without the `plugin` key). */
  configSchema: S;
  /** One-line description shown by `rl validate` and in error listings. */
  description?: string;
  create(config: z.output<S>, ctx: PluginContext): PluginInstances[K] | Promise<PluginInstances[K]>;
  /** What the plugin needs from the launcher (preflight checks, images, servers, trainer files). */
  launch?: LaunchHooks<z.output<S>>;
}

/**
 * Declares a plugin. The config type of `create` is inferred from `configSchema`.
 * @example
 * export default definePlugin({
 *   name: "length-penalty", kind: "reward",
 *   configSchema: z.object({ per_token: z.number().default(0.001) }),
 *   create: (config) => ({ score: (t) => ({ turns: t.turns.map((x) => -config.per_token * x.completionTokenIds.length) }) }),
 * });
 */
export function definePlugin<K extends PluginKind, S extends z.ZodType>(
  definition: PluginDefinition<K, S>,
): PluginDefinition<K, S> {
  return definition;
}
