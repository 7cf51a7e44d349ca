import type { RewardResult, Trajectory, Turn } from "@air/core";
import { type ResolvedMetric, readTurnScore, resolveMetric } from "./metric.ts";
import type { DeltaConfig } from "./options.ts";
import { impossibleScore } from "./range.ts";

/** The tamper flags the env set on `turn` (`info.tamper`), or []. */
export function tamperOf(turn: Turn): string[] {
  const flags = turn.info?.tamper;
  return Array.isArray(flags) ? flags.filter((f): f is string => typeof f === "string") : [];
}

/** Where a warning about a refused score goes (the plugin passes its logger). */
export type Warn = (message: string) => void;

/**
 * Per-turn improvement rewards of one trajectory (formulas in the package README). Turn i gets
 * `clip(scale × sign × (s_i − ref) / norm)` when it produced a valid score s_i, `no_score_reward` when it
 * did not evaluate, `invalid_reward` when the evaluation failed. The total is the sum of the turns.
 * @example
 * const r = deltaRewards(trajectory, DELTA_DEFAULTS);
 * r.turns; // one reward per turn
 */
export function deltaRewards(
  trajectory: Trajectory,
  config: DeltaConfig,
  warn: Warn = () => {},
  /** The smallest change that counts, in metric units (`min_improvement` resolved; default its number or 0). */
  minChange: number = typeof config.min_improvement === "number" ? config.min_improvement : 0,
): Required<RewardResult> {
  const metric = resolveMetric(trajectory.score, config);
  const turns = trajectory.turns;
  if (!metric) {
    if (turns.some((t) => t.scores && !t.evaluationError))
      throw new Error(
        `trajectory ${trajectory.id} has scores but no priority metric: the env gives no ScoreSpec; ` +
          `set metric = "..." in the reward section`,
      );
    const values = turns.map((t) => (t.evaluationError ? config.invalid_reward : config.no_score_reward));
    const invalid = turns.filter((t) => t.evaluationError).length;
    return finish(onTamper(trajectory, values, config), {
      ...emptyCounts(),
      invalid_turns: invalid,
      no_metric: 1,
      tamper_turns: turns.filter((t) => tamperOf(t).length > 0).length,
    });
  }
  return scoreWithMetric(trajectory, metric, config, warn, minChange);
}

function scoreWithMetric(
  trajectory: Trajectory,
  metric: ResolvedMetric,
  config: DeltaConfig,
  warn: Warn,
  minChange: number,
): Required<RewardResult> {
  const counts = emptyCounts();
  const values: number[] = [];
  let start = metric.baseline ?? (config.missing_baseline === "zero" ? 0 : undefined);
  let reference = start;
  let final: number | undefined;
  const clip = (x: number) =>
    config.clip === undefined ? x : Math.max(-config.clip, Math.min(config.clip, x));
  const divisor = () => {
    const magnitude = Math.abs(start ?? 0);
    if (config.normalize === "none") return 1;
    if (magnitude < config.eps) {
      counts.normalize_fallback = 1;
      return 1;
    }
    return magnitude;
  };
  for (const turn of trajectory.turns) {
    if (tamperOf(turn).length > 0) {
      counts.tamper_turns++;
      if (config.on_tamper === "zero") {
        values.push(0);
        continue;
      }
    }
    const score = readTurnScore(turn, metric.name);
    if (score.kind !== "none" && config.score_kinds && !config.score_kinds.includes(turn.stepKind ?? "")) {
      counts.ignored_kind_turns++;
      values.push(config.no_score_reward);
      continue;
    }
    if (score.kind === "none") {
      values.push(config.no_score_reward);
      continue;
    }
    if (score.kind === "invalid") {
      counts.invalid_turns++;
      values.push(config.invalid_reward);
      continue;
    }
    const impossible = impossibleScore(metric.name, score.value, trajectory.score?.ranges);
    if (impossible) {
      counts.impossible_turns++;
      warn(
        `delta: turn ${turn.index} of ${trajectory.id} (${trajectory.task}) gets no reward: ${impossible}; the task's evaluation is broken or forged (run \`bun run audit\`)`,
      );
      values.push(0);
      continue;
    }
    counts.scored_turns++;
    final = score.value;
    if (reference === undefined || start === undefined) {
      start = score.value;
      reference = score.value;
      counts.baseline_from_first_score = 1;
      values.push(0);
      continue;
    }
    if (minChange > 0 && Math.abs(score.value - reference) < minChange) {
      counts.below_min_turns++;
      values.push(0);
      continue;
    }
    const improvement = (metric.sign * (score.value - reference)) / divisor();
    if (improvement > 0) counts.improved_turns++;
    if (improvement < 0) counts.worsened_turns++;
    values.push(clip(config.scale * improvement));
    if (config.relative_to === "previous" || improvement > 0) reference = score.value;
  }
  if (final === undefined || start === undefined) {
    counts.no_score = 1;
  } else {
    const raw = metric.sign * (final - start);
    const improvement = Math.abs(raw) < minChange ? 0 : raw;
    counts.final_improvement = improvement;
    const last = values.length - 1;
    if (config.terminal_weight !== 0 && last >= 0)
      values[last] =
        (values[last] ?? 0) + clip((config.terminal_weight * config.scale * improvement) / divisor());
  }
  return finish(onTamper(trajectory, values, config), counts);
}

/** `values` with every flagged turn at 0 when `on_tamper = "zero"` (also after the terminal bonus). */
function onTamper(trajectory: Trajectory, values: number[], config: DeltaConfig): number[] {
  if (config.on_tamper !== "zero") return values;
  return values.map((v, i) => (tamperOf(trajectory.turns[i] as Turn).length > 0 ? 0 : v));
}

function emptyCounts() {
  return {
    scored_turns: 0,
    invalid_turns: 0,
    impossible_turns: 0,
    improved_turns: 0,
    worsened_turns: 0,
    no_score: 0,
    final_improvement: 0,
    baseline_from_first_score: 0,
    normalize_fallback: 0,
    no_metric: 0,
    ignored_kind_turns: 0,
    tamper_turns: 0,
    below_min_turns: 0,
  };
}

function finish(values: number[], metrics: Record<string, number>): Required<RewardResult> {
  return { turns: values, total: values.reduce((a, b) => a + b, 0), metrics };
}
