/**
 * Domain types shared by every plugin. Stored runs carry `schemaVersion` so later code can read them.
 * Token arrays are plain number arrays; a "sequence" is prompt tokens followed by completion tokens.
 */
export const SCHEMA_VERSION = 1;

export type Role = "system" | "user" | "assistant" | "tool";

/** One chat message, as sent to an OpenAI-compatible server. */
export interface Message {
  role: Role;
  content: string;
}

/** Direction of a metric: whether a larger value is better. */
export type MetricDirection = "maximize" | "minimize";

/** What an environment tells rewards about how a task is scored. */
export interface ScoreSpec {
  /** The metric rewards follow (e.g. "Score", "accuracy", "rmse"). */
  priorityMetric: string;
  /** Direction per metric; a metric not listed counts as "maximize". */
  directions: Record<string, MetricDirection>;
  /** The task's baseline scores, the first "previous score" of a rollout. */
  baseline?: Record<string, number>;
  /** Values each metric can take (either end open when undefined): a score outside is impossible, never paid. */
  ranges?: Record<string, { min?: number; max?: number }>;
}

/** One unit of work for a rollout: a task instance, a dataset row, ... */
export interface Example {
  /** Stable id; rollouts of the same example in one step form a group. */
  id: string;
  /** Task name for per-task summaries (e.g. "titanic"). */
  task: string;
  /** Anything the environment needs to open the example. */
  data?: Record<string, unknown>;
  score?: ScoreSpec;
}

/** What the policy chose to do, parsed out of the completion text. */
export interface Action {
  /** The completion text as the model wrote it. */
  text: string;
  /** The one command extracted from the text, when the policy parses commands. */
  command?: string;
  /** Why no command could be extracted; the environment turns it into an observation. */
  parseError?: string;
  /** Remarks for the agent, e.g. "several commands found, ran the first". */
  notes?: string[];
}

/** One completion from the policy, with what the trainer needs. */
export interface Generation {
  action: Action;
  /** The messages actually sent, when they differ from the request's (trimmed history, format re-asks). */
  promptMessages?: Message[];
  promptTokenIds: number[];
  completionTokenIds: number[];
  /** Logprob of each completion token under the sampling policy (same length as completionTokenIds). */
  completionLogprobs: number[];
  /**
   * Per completion token: 1 trained on, 0 left out of the loss because the server gave no logprob for it (llama.cpp
   * leaves out tokens that end inside a UTF-8 character; their `completionLogprobs` entry is 0). Absent: all 1.
   */
  completionMask?: number[];
  finishReason: "stop" | "length" | "error" | string;
  /** Policy (weights) version that produced this generation. */
  policyVersion: number;
  /** Sampling temperature used. */
  temperature: number;
  usage?: { promptTokens: number; completionTokens: number };
  /** The policy's own note on `promptTokenIds` (opaque to the loop), handed back with the next turn's request. */
  promptCursor?: unknown;
}

/** What the environment returns after one action. */
export interface StepResult {
  /** Text shown to the agent as the next user/tool message. */
  observation: string;
  done: boolean;
  /** Scores produced by this step (a validate or submit), keyed by metric name. */
  scores?: Record<string, number>;
  /** The step tried to evaluate but the evaluation failed (no artefact, crash, bad output). */
  evaluationError?: string;
  /** "validate" | "submit" | "auto_submit" | other kinds an env reports. */
  kind?: string;
  /** The command failed or timed out inside the sandbox. */
  toolError?: string;
  info?: Record<string, unknown>;
}

export interface Timing {
  startMs: number;
  endMs: number;
}

/**
 * Token ids as a turn holds them: a plain list, or a view of the rollout's one token buffer (the loop's
 * `TokenLog` stores each prompt's shared prefix once). Read with `.length`, indexing and iteration;
 * `Array.from` before JSON.
 */
export type TokenIds = number[] | Int32Array;

/** Logprobs as a turn holds them: a plain list, or 4-byte floats (the loop stores them so; vLLM samples in fp32). */
export type Logprobs = number[] | Float32Array;

/**
 * A `JSON.stringify` replacer writing typed arrays (`TokenIds`, `Logprobs`) as plain lists.
 * @example JSON.stringify(trajectory, tokenIdsAsLists)
 */
export function tokenIdsAsLists(_key: string, value: unknown): unknown {
  return value instanceof Int32Array || value instanceof Float32Array ? Array.from(value) : value;
}

/** One policy ⇄ environment exchange. */
export interface Turn {
  index: number;
  /** The messages the policy saw (the full history at this turn). */
  promptMessages: Message[];
  completionText: string;
  promptTokenIds: TokenIds;
  completionTokenIds: TokenIds;
  completionLogprobs: Logprobs;
  /** `Generation.completionMask`: 0 for a completion token without a logprob (not trained on); absent: all 1. */
  completionMask?: number[];
  finishReason: string;
  action: Action;
  observation: string;
  policyVersion: number;
  temperature: number;
  scores?: Record<string, number>;
  stepKind?: string;
  toolError?: string;
  parseError?: string;
  evaluationError?: string;
  /** Weighted total reward of this turn (set after rewards ran). */
  reward?: number;
  /** Reward per named reward entry, before weighting. */
  rewardBreakdown?: Record<string, number>;
  info?: Record<string, unknown>;
  timing: { generateMs: number; envMs: number };
}

/** `branched`: a tree rollout node that ended at a branch point; its children continue it (loop/tree.ts). */
export type StopReason = "done" | "max_turns" | "failed" | "context_length" | "aborted" | "branched";

export interface Trajectory {
  schemaVersion: number;
  id: string;
  exampleId: string;
  task: string;
  /** `${step}:${exampleId}`: rollouts sharing it are one GRPO group. */
  groupId: string;
  /** The step whose batch this trajectory is for (for an evaluation: the step after which it ran). */
  step: number;
  /** "eval" for rollouts of a periodic evaluation (`orchestrator.eval_every`); they are never trained on. */
  split?: "train" | "eval";
  /** Every policy version that produced a turn (in-flight weight updates can add more than one). */
  policyVersions: number[];
  /** The initial prompt (system + task). */
  initialMessages: Message[];
  turns: Turn[];
  stopReason: StopReason;
  error?: string;
  /** Trajectory total reward (set after rewards ran). */
  reward?: number;
  rewardBreakdown?: Record<string, number>;
  score?: ScoreSpec;
  metrics: Record<string, number>;
  /** Where this rollout forked from, for tree rollouts: the parent node and the index of this node's first turn. */
  parent?: { trajectoryId: string; turnIndex: number };
  timing: Timing;
}

/** A training sample: one token sequence and what the trainer needs per token. */
export interface Sample {
  trajectoryId: string;
  groupId: string;
  tokenIds: number[];
  /** 1 where the token was sampled by the policy (trained on), 0 for prompt and environment tokens. */
  lossMask: number[];
  /** Inference logprob per token (0 where lossMask is 0). */
  logprobs: number[];
  /** Advantage per token (0 where lossMask is 0), filled after the advantage plugin ran. */
  advantages: number[];
  /** Completion spans: which turn each masked range of tokens belongs to ([start, end) in tokenIds). */
  spans: Array<{ turn: number; start: number; end: number }>;
  temperature: number;
  /** Oldest policy version among the sample's turns. */
  policyVersion: number;
  /** Number of tokens cut off to fit seq_len (0 if none). */
  truncatedTokens: number;
}

/** The rollouts of one example in one step. */
export interface Group {
  id: string;
  exampleId: string;
  step: number;
  trajectories: Trajectory[];
}

export interface Batch {
  schemaVersion: number;
  step: number;
  samples: Sample[];
  /** Metrics computed while building the batch (advantage stats, dropped samples, ...). */
  metrics: Record<string, number>;
}

/** A new set of weights produced by a trainer. */
export interface WeightsRef {
  /** Policy version these weights are (= number of batches trained on). */
  version: number;
  /** Directory with the weights or adapter, when the trainer writes files. */
  path?: string;
  kind?: "full" | "lora";
}
