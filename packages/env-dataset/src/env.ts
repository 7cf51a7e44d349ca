import { resolve } from "node:path";
import { definePlugin, type EnvSession, type Example, type StepResult } from "@air/core";
import { z } from "zod";
import { buildExamples, type DatasetExampleData } from "./examples.ts";

/**
 * Config of the `dataset` env (the `[env]` section without `plugin`).
 * @example datasetEnvConfig.parse({ file: "train.jsonl", answer_field: "correct" })
 */
export const datasetEnvConfig = z.object({
  file: z.string().min(1).describe("dataset file (JSONL, CSV, TSV or JSON array), relative to the TOML file"),
  eval_file: z
    .string()
    .optional()
    .describe("separate eval file; without it `eval_fraction` of `file` is held out for eval"),
  format: z
    .enum(["auto", "jsonl", "csv", "tsv", "json"])
    .default("auto")
    .describe("file format (auto: by extension)"),
  eval_fraction: z
    .number()
    .min(0)
    .max(1)
    .default(0.1)
    .describe("share of `file` held out for eval when no eval_file"),
  num_train_examples: z.number().int().default(-1).describe("train examples to use (-1 = all)"),
  num_eval_examples: z.number().int().default(-1).describe("eval examples to use (-1 = all)"),
  seed: z
    .number()
    .int()
    .default(0)
    .describe("shuffle/split seed; not run.seed, so the eval split stays the same across runs"),
  shuffle: z.boolean().default(true).describe("shuffle rows before splitting and capping"),
  prompt_template: z
    .string()
    .default("{question}")
    .describe("user prompt; `{field}` inserts a row field, `{field|choices}` a lettered option list"),
  system_prompt: z.string().optional().describe("system message sent before the prompt"),
  answer_field: z.string().default("answer").describe("row field holding the gold answer"),
  id_field: z.string().optional().describe("row field used as example id (default: split and row number)"),
  task_field: z.string().optional().describe("row field naming the task for per-task figures"),
  task: z.string().optional().describe("task name when there is no task_field (default: from the file name)"),
  turns: z
    .number()
    .int()
    .positive()
    .default(1)
    .describe("fixed number of turns; after each but the last the agent gets `followup_prompt`"),
  followup_prompt: z
    .string()
    .default("Check your work and state your final answer again.")
    .describe("user message between turns of a multi-turn episode"),
});

export type DatasetEnvConfig = z.output<typeof datasetEnvConfig>;

/**
 * Dataset environment: one example per row, a single-turn (or fixed multi-turn) episode whose every step
 * returns `info.answer` (the gold answer) and `info.final` (true on the last turn) for the rubric rewards.
 * @example
 * [env]
 * plugin = "dataset"
 * file = "../../data/dataset/algebra-mc/train.jsonl"
 * prompt_template = "{question}\n{options|choices}"
 * answer_field = "correct"
 */
export default definePlugin({
  name: "dataset",
  kind: "env",
  description: "single-turn or fixed multi-turn episodes over a local JSONL/CSV dataset",
  configSchema: datasetEnvConfig,
  create: (config, ctx) => {
    const splits = buildExamples({
      file: resolve(ctx.configDir, config.file),
      evalFile: config.eval_file ? resolve(ctx.configDir, config.eval_file) : undefined,
      format: config.format,
      evalFraction: config.eval_fraction,
      numTrainExamples: config.num_train_examples,
      numEvalExamples: config.num_eval_examples,
      seed: config.seed,
      shuffle: config.shuffle,
      promptTemplate: config.prompt_template,
      systemPrompt: config.system_prompt,
      answerField: config.answer_field,
      idField: config.id_field,
      taskField: config.task_field,
      task: config.task,
    });
    ctx.log.info(`${splits.train.length} train and ${splits.eval.length} eval examples from ${config.file}`);
    return {
      examples: async (split) => splits[split],
      canFork: true,
      // Rubric rewards score the answer; no session reports a score (validate/submit).
      scores: false,
      open: async (example) => openSession(example, config),
      // rl --resume: the only state is the turn counter (saveState), so a recorded rollout always continues
      restore: async (example, { state }) => {
        if (typeof state.turn !== "number")
          throw new Error(`no turn count in the recorded state of ${example.id}`);
        return datasetSession(sessionData(example), config, state.turn);
      },
    };
  },
});

function sessionData(example: Example): DatasetExampleData {
  const data = example.data as DatasetExampleData | undefined;
  if (!data || typeof data.answer !== "string" || !Array.isArray(data.messages)) {
    throw new Error(`example ${example.id} was not made by the dataset env (no data.answer / data.messages)`);
  }
  return data;
}

function openSession(example: Example, config: DatasetEnvConfig): EnvSession {
  return datasetSession(sessionData(example), config, 0);
}

/** A session at turn `turn`; its only state is that counter, so a fork is a copy of it (tree rollouts). */
function datasetSession(data: DatasetExampleData, config: DatasetEnvConfig, startTurn: number): EnvSession {
  let turn = startTurn;
  return {
    start: async () => data.messages.map((m) => ({ ...m })),
    fork: async () => datasetSession(data, config, turn),
    saveState: async () => ({ turn }),
    step: async (): Promise<StepResult> => {
      turn++;
      const done = turn >= config.turns;
      return {
        observation: done ? "" : config.followup_prompt,
        done,
        kind: done ? "answer" : "turn",
        info: { answer: data.answer, turn: turn - 1, final: done },
      };
    },
    close: async () => {},
  };
}
