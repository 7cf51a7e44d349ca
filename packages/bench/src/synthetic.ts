import { type Batch, type Message, type Sample, SCHEMA_VERSION, type Trajectory, type Turn } from "@air/core";

const TASK =
  "Train a model on data/train.csv that beats the baseline accuracy; validate, then submit. ".repeat(16);
const COMPLETION =
  "DISCUSSION\nThe baseline uses a linear model; I will try gradient boosting and validate it.\n```\npython train.py --model gbm\n```";
const OBSERVATION = `${"epoch 1/10 loss 0.6931 acc 0.5012\n".repeat(24)}Validation accuracy: 0.8123\n`;

/**
 * Realistic trajectories for store benchmarks: `turns` turns each with a growing prompt, a ~1 KB observation,
 * ~500 prompt and 40 completion token ids and scores on the last turn. Token arrays are shared between
 * trajectories (rows store only their lengths), so 10k trajectories fit in memory.
 * @example const [t] = syntheticTrajectories({ count: 1, turns: 5, step: 0 });
 */
export function syntheticTrajectories(options: {
  count: number;
  turns: number;
  step: number;
  offset?: number;
  /** Each turn's observation and reply (default ~1 KB of training log, a ~130-character reply). */
  observation?: string;
  completion?: string;
  /** Prompt tokens of turn i (default 500); the ids are views of one shared buffer. */
  promptTokens?: (turn: number) => number;
}): Trajectory[] {
  const observation = options.observation ?? OBSERVATION;
  const completion = options.completion ?? COMPLETION;
  const initial: Message[] = [
    { role: "system", content: "You are an autonomous ML research agent working in a Linux shell." },
    { role: "user", content: TASK },
  ];
  const promptIds = Array.from({ length: 500 }, (_, i) => (i * 7919) % 32000);
  const sized = options.promptTokens;
  const shared = sized
    ? Int32Array.from({ length: sized(options.turns - 1) }, (_, i) => (i * 7919) % 32000)
    : undefined;
  const completionIds = Array.from({ length: 40 }, (_, i) => (i * 104729) % 32000);
  const logprobs = completionIds.map((id) => -((id % 13) / 10) - 0.05);
  const out: Trajectory[] = [];
  for (let n = 0; n < options.count; n++) {
    const id = `s${options.step}-r${(options.offset ?? 0) + n}`;
    const messages: Message[] = [...initial];
    const turns: Turn[] = [];
    for (let i = 0; i < options.turns; i++) {
      const last = i === options.turns - 1;
      turns.push({
        index: i,
        promptMessages: [...messages],
        completionText: completion,
        promptTokenIds: shared && sized ? shared.subarray(0, sized(i)) : promptIds,
        completionTokenIds: completionIds,
        completionLogprobs: logprobs,
        finishReason: "stop",
        action: { text: completion, command: "python train.py --model gbm" },
        observation,
        policyVersion: options.step,
        temperature: 1,
        scores: last ? { accuracy: 0.8 + (n % 10) / 100 } : undefined,
        stepKind: last ? "validate" : "command",
        reward: last ? (n % 10) / 10 : 0,
        timing: { generateMs: 400, envMs: 100 },
      });
      messages.push({ role: "assistant", content: completion }, { role: "user", content: observation });
    }
    const now = Date.now();
    out.push({
      schemaVersion: SCHEMA_VERSION,
      id,
      exampleId: `ex${n % 16}`,
      task: "sim",
      groupId: `${options.step}:ex${n % 16}`,
      step: options.step,
      policyVersions: [options.step],
      initialMessages: initial,
      turns,
      stopReason: "max_turns",
      reward: (n % 10) / 10,
      score: {
        priorityMetric: "accuracy",
        directions: { accuracy: "maximize" },
        baseline: { accuracy: 0.75 },
      },
      metrics: { attempts: 1 },
      timing: { startMs: now - 2500, endMs: now },
    });
  }
  return out;
}

/** A batch with one sample per turn of `trajectories` (token arrays shared; rows store only sizes). */
export function syntheticBatch(step: number, trajectories: Trajectory[]): Batch {
  const length = 540;
  const tokenIds = new Array<number>(length).fill(1);
  const lossMask = tokenIds.map((_, i) => (i >= 500 ? 1 : 0));
  const advantages = lossMask.map((m) => m * 0.5);
  const samples: Sample[] = trajectories.flatMap((t) =>
    t.turns.map((turn) => ({
      trajectoryId: t.id,
      groupId: t.groupId,
      tokenIds,
      lossMask,
      logprobs: advantages,
      advantages,
      spans: [{ turn: turn.index, start: 500, end: length }],
      temperature: 1,
      policyVersion: step,
      truncatedTokens: 0,
    })),
  );
  return {
    schemaVersion: SCHEMA_VERSION,
    step,
    samples,
    metrics: {
      "reward/mean": 0.45,
      "batch/samples": samples.length,
      // Core counts rollouts with a timed-out command per step; the dashboard's flat-reward panel reads it.
      "rollout/timeouts": trajectories.filter((t) =>
        t.turns.some((x) => /timed out|timeout/i.test(x.toolError ?? "")),
      ).length,
    },
  };
}
