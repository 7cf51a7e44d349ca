import { sql } from "drizzle-orm";
import {
  blob,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import { stepAdvantages, stepTotals } from "./schema-totals.ts";

/**
 * The run store's tables. JSON columns hold text written with JSON.stringify; times are epoch milliseconds.
 * Change this file (or schema-totals.ts), then run `bunx drizzle-kit generate` in packages/logger-sqlite and commit the new SQL.
 */
export const runs = sqliteTable("runs", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull(),
  runDir: text("run_dir"),
  configJson: text("config_json"),
  status: text("status").notNull().default("running"),
  error: text("error"),
  source: text("source").notNull().default("air").$type<"air" | "air-agent">(),
  startedAt: integer("started_at").notNull(),
  endedAt: integer("ended_at"),
  /**
   * Last time the writing process said it was alive (the sqlite logger writes it every few seconds): a
   * "running" run whose heartbeat is old lost its launcher (see `liveStatus`).
   */
  heartbeatAt: integer("heartbeat_at"),
  /** How many times `rl --resume` continued this run; each resume drops the interrupted steps' rows first. */
  resumes: integer("resumes").notNull().default(0),
});

export const steps = sqliteTable(
  "steps",
  {
    runId: integer("run_id").notNull(),
    step: integer("step").notNull(),
    policyVersion: integer("policy_version"),
    startedAt: integer("started_at"),
    endedAt: integer("ended_at"),
    trajectoryCount: integer("trajectory_count"),
    sampleCount: integer("sample_count"),
    turnCount: integer("turn_count"),
    warningsJson: text("warnings_json"),
  },
  (t) => [primaryKey({ columns: [t.runId, t.step] })],
);

export const trajectories = sqliteTable(
  "trajectories",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: integer("run_id").notNull(),
    rolloutId: text("rollout_id").notNull(),
    step: integer("step").notNull(),
    /** "eval" for a periodic evaluation's rollout (`orchestrator.eval_every`): never trained on, kept out of training stats. */
    split: text("split").notNull().default("train").$type<"train" | "eval">(),
    exampleId: text("example_id").notNull(),
    task: text("task").notNull(),
    groupId: text("group_id").notNull(),
    attempt: integer("attempt").notNull().default(0),
    status: text("status").notNull().default("running"),
    stopReason: text("stop_reason"),
    error: text("error"),
    reward: real("reward"),
    rewardBreakdownJson: text("reward_breakdown_json"),
    policyVersionsJson: text("policy_versions_json"),
    priorityMetric: text("priority_metric"),
    baselineScore: real("baseline_score"),
    finalScore: real("final_score"),
    improvement: real("improvement"),
    validationHistoryJson: text("validation_history_json"),
    validated: integer("validated", { mode: "boolean" }),
    /** Turns of the finished trajectory; 0 while it runs (its turn rows are counted instead, see listTrajectories). */
    turnCount: integer("turn_count").notNull().default(0),
    promptTokens: integer("prompt_tokens"),
    completionTokens: integer("completion_tokens"),
    initialMessagesJson: text("initial_messages_json"),
    metricsJson: text("metrics_json"),
    scoreSpecJson: text("score_spec_json"),
    parentJson: text("parent_json"),
    infoJson: text("info_json"),
    startedAt: integer("started_at"),
    endedAt: integer("ended_at"),
  },
  (t) => [
    uniqueIndex("trajectories_run_rollout").on(t.runId, t.rolloutId),
    index("trajectories_run_step").on(t.runId, t.step),
    index("trajectories_run_task").on(t.runId, t.task),
    // The dashboard at 100k trajectories: a group's tree (trajectory and group pages) and the sorted lists.
    index("trajectories_run_group").on(t.runId, t.groupId),
    index("trajectories_run_reward").on(t.runId, t.reward),
    index("trajectories_run_improvement").on(t.runId, t.improvement),
    index("trajectories_run_final_score").on(t.runId, t.finalScore),
    // A periodic evaluation's rollouts (pass@k over steps) without reading the training ones.
    index("trajectories_run_split_step").on(t.runId, t.split, t.step),
    // Search over errors: only the trajectories that have one.
    index("trajectories_run_error").on(t.runId, t.error).where(sql`error IS NOT NULL`),
  ],
);

export const turns = sqliteTable(
  "turns",
  {
    runId: integer("run_id").notNull(),
    rolloutId: text("rollout_id").notNull(),
    idx: integer("idx").notNull(),
    /** Messages of the prompt after the first `promptBase` ones, which equal the previous turn's history. */
    promptMessagesJson: text("prompt_messages_json").notNull(),
    promptBase: integer("prompt_base").notNull().default(0),
    /**
     * True when the messages after `promptBase` are exactly the previous turn's reply and observation (the usual
     * case): they are not stored a second time and `promptMessagesJson` is `[]`; readers rebuild them.
     */
    promptFromPrevious: integer("prompt_from_previous", { mode: "boolean" }).notNull().default(false),
    completion: text("completion").notNull(),
    command: text("command"),
    parseError: text("parse_error"),
    toolError: text("tool_error"),
    evaluationError: text("evaluation_error"),
    observation: text("observation").notNull(),
    stepKind: text("step_kind"),
    scoresJson: text("scores_json"),
    reward: real("reward"),
    rewardBreakdownJson: text("reward_breakdown_json"),
    finishReason: text("finish_reason"),
    policyVersion: integer("policy_version"),
    temperature: real("temperature"),
    promptTokens: integer("prompt_tokens"),
    completionTokens: integer("completion_tokens"),
    logprobMean: real("logprob_mean"),
    generateMs: integer("generate_ms"),
    envMs: integer("env_ms"),
    notesJson: text("notes_json"),
    infoJson: text("info_json"),
  },
  (t) => [
    primaryKey({ columns: [t.runId, t.rolloutId, t.idx] }),
    // Turns the env flagged as tampering (a non-empty `info.tamper`): the dashboard's "flagged only" filter and
    // per-row counts read these, not every turn's JSON. The WHERE is FLAGGED_TURN in queries/trajectories.ts.
    index("turns_run_flagged")
      .on(t.runId, t.rolloutId)
      .where(sql`json_valid(info_json) AND json_array_length(info_json, '$.tamper') > 0`),
  ],
);

/**
 * What `rl --resume` needs to continue a turn's rollout (`orchestrator.resume_rollouts`), written with the turn in
 * one transaction: the token ids (the prompt's after the first `promptIdsBase`, which are the previous turn's prompt
 * and completion), the completion's logprobs (little-endian int32 / float32 bytes), its mask and the env's resume
 * point.
 */
export const turnResume = sqliteTable(
  "turn_resume",
  {
    runId: integer("run_id").notNull(),
    rolloutId: text("rollout_id").notNull(),
    idx: integer("idx").notNull(),
    promptIdsBase: integer("prompt_ids_base").notNull(),
    promptIds: blob("prompt_ids", { mode: "buffer" }).notNull(),
    completionIds: blob("completion_ids", { mode: "buffer" }).notNull(),
    logprobs: blob("logprobs", { mode: "buffer" }).notNull(),
    /** `Turn.completionMask` (one byte per completion token, 0: no logprob, not trained on); null when absent (all 1). */
    completionMask: blob("completion_mask", { mode: "buffer" }),
    /** `{ state, done }`: the env session's state after the turn (`EnvSession.saveState`). */
    pointJson: text("point_json").notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.rolloutId, t.idx] })],
);

export const samples = sqliteTable(
  "samples",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: integer("run_id").notNull(),
    step: integer("step").notNull(),
    rolloutId: text("rollout_id").notNull(),
    groupId: text("group_id").notNull(),
    tokens: integer("tokens").notNull(),
    lossTokens: integer("loss_tokens").notNull(),
    advantageMean: real("advantage_mean").notNull(),
    advantageMin: real("advantage_min").notNull(),
    advantageMax: real("advantage_max").notNull(),
    policyVersion: integer("policy_version").notNull(),
    truncatedTokens: integer("truncated_tokens").notNull().default(0),
  },
  (t) => [index("samples_run_step").on(t.runId, t.step)],
);

export const metrics = sqliteTable(
  "metrics",
  {
    runId: integer("run_id").notNull(),
    step: integer("step").notNull(),
    name: text("name").notNull(),
    value: real("value").notNull(),
    /** "step" for the loop's step metrics, "trainer" for what the trainer reported. */
    source: text("source").notNull().default("step"),
  },
  (t) => [primaryKey({ columns: [t.runId, t.name, t.step] }), index("metrics_run_step").on(t.runId, t.step)],
);

export const warnings = sqliteTable(
  "warnings",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: integer("run_id").notNull(),
    step: integer("step").notNull(),
    message: text("message").notNull(),
  },
  (t) => [index("warnings_run").on(t.runId, t.step)],
);

export const logs = sqliteTable(
  "logs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: integer("run_id").notNull(),
    level: text("level").notNull(),
    source: text("source").notNull(),
    message: text("message").notNull(),
    timeMs: integer("time_ms").notNull(),
  },
  (t) => [index("logs_run").on(t.runId, t.id)],
);

export const processes = sqliteTable(
  "processes",
  {
    runId: integer("run_id").notNull(),
    role: text("role").notNull(),
    pid: integer("pid"),
    state: text("state").notNull(),
    logPath: text("log_path"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.role] })],
);

export const sandboxes = sqliteTable(
  "sandboxes",
  {
    runId: integer("run_id").notNull(),
    sandboxId: text("sandbox_id").notNull(),
    rolloutId: text("rollout_id"),
    state: text("state").notNull(),
    command: text("command"),
    /** The Docker host the sandbox runs on when the env spreads them over several (`[env.docker] hosts`). */
    host: text("host"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.sandboxId] })],
);

/** Evaluation results (written by the eval package): one row per task × policy × metric. */
export const evaluations = sqliteTable(
  "evaluations",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    runId: integer("run_id"),
    task: text("task").notNull(),
    policy: text("policy").notNull(),
    checkpoint: text("checkpoint"),
    step: integer("step"),
    metric: text("metric").notNull(),
    value: real("value").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("evaluations_run").on(t.runId, t.task)],
);

export { stepAdvantages, stepTotals } from "./schema-totals.ts";

/** Every table, for `drizzle(client, { schema })`. */
export const schema = {
  runs,
  steps,
  trajectories,
  turns,
  turnResume,
  samples,
  stepTotals,
  stepAdvantages,
  metrics,
  warnings,
  logs,
  processes,
  sandboxes,
  evaluations,
};
