import type { AdvantageEstimator, TrajectoryStrategy } from "../plugin.ts";
import { type Batch, type Group, type Sample, SCHEMA_VERSION, type Trajectory } from "../types.ts";
import { addSummary } from "./stats.ts";

export interface BatchInput {
  step: number;
  /** Finished trajectories of the step, failed ones included. */
  trajectories: Trajectory[];
  failedGroups: "drop" | "keep";
  filterZeroAdvantages: boolean;
  advantage: AdvantageEstimator;
  strategy: TrajectoryStrategy;
  /** What the run can produce (unset = both): a rate the env or policy cannot produce is left out of the metrics. */
  produces?: { scores: boolean; parseErrors: boolean };
}

export interface BatchOutput {
  batch: Batch;
  groups: Group[];
  warnings: string[];
}

/** Groups trajectories, computes advantages, turns trajectories into samples and collects step metrics. */
export function buildBatch(input: BatchInput): BatchOutput {
  const { step, trajectories } = input;
  const metrics: Record<string, number> = {};
  const warnings: string[] = [];
  const byGroup = new Map<string, Trajectory[]>();
  for (const t of trajectories) byGroup.set(t.groupId, [...(byGroup.get(t.groupId) ?? []), t]);

  const groups: Group[] = [];
  let droppedGroups = 0;
  for (const [id, members] of byGroup) {
    const ok = members.filter((t) => t.stopReason !== "failed");
    if (ok.length === 0 || (ok.length < members.length && input.failedGroups === "drop")) {
      droppedGroups++;
      continue;
    }
    groups.push({ id, exampleId: ok[0]!.exampleId, step, trajectories: ok });
  }
  const failed = trajectories.filter((t) => t.stopReason === "failed").length;
  metrics["rollout/count"] = trajectories.length;
  metrics["rollout/failed"] = failed;
  metrics["group/count"] = groups.length;
  metrics["group/dropped"] = droppedGroups;

  const used = groups.flatMap((g) => g.trajectories);
  addSummary(
    metrics,
    "reward",
    used.map((t) => t.reward ?? 0),
  );
  addSummary(
    metrics,
    "rollout/turns",
    used.map((t) => t.turns.length),
  );
  addSummary(
    metrics,
    "rollout/completion_tokens",
    used.map((t) => t.turns.reduce((a, x) => a + x.completionTokenIds.length, 0)),
  );
  const count = (pred: (t: Trajectory) => boolean) =>
    used.length ? used.filter(pred).length / used.length : 0;
  const produces = input.produces ?? { scores: true, parseErrors: true };
  if (produces.scores) metrics["rollout/no_score_frac"] = count((t) => !t.turns.some((x) => x.scores));
  if (produces.parseErrors)
    metrics["rollout/parse_error_frac"] = count((t) => t.turns.some((x) => x.parseError));
  metrics["rollout/tool_error_frac"] = count((t) => t.turns.some((x) => x.toolError));
  metrics["rollout/evaluation_error_frac"] = count((t) => t.turns.some((x) => x.evaluationError));
  metrics["rollout/max_turns_frac"] = count((t) => t.stopReason === "max_turns");
  metrics["rollout/no_turn_frac"] = count((t) => t.turns.length === 0);
  const noTurn = beforeFirstTurn(used);
  metrics["rollout/timeouts"] = used.filter((t) =>
    t.turns.some((x) => TIMEOUT.test(x.toolError ?? "")),
  ).length;

  const zeroVar = groups.filter((g) => new Set(g.trajectories.map((t) => t.reward ?? 0)).size <= 1).length;
  metrics["group/zero_variance_frac"] = groups.length ? zeroVar / groups.length : 0;
  if (groups.length > 0 && zeroVar === groups.length) {
    const causes = [
      ...(produces.scores
        ? [`${pct(metrics["rollout/no_score_frac"])} of rollouts never produced a score (no validate/submit)`]
        : []),
      ...(produces.parseErrors ? [`${pct(metrics["rollout/parse_error_frac"])} had format errors`] : []),
      `${pct(metrics["rollout/evaluation_error_frac"])} had evaluation errors`,
      ...(noTurn ? [noTurn] : []),
    ];
    warnings.push(
      `step ${step}: every group has zero reward variance, so every advantage is 0 and the loss will be 0. ` +
        `${causes.join(", ")}.`,
    );
  }
  if (droppedGroups > 0)
    warnings.push(`step ${step}: dropped ${droppedGroups} group(s) with failed rollouts`);

  const advantages = input.advantage.compute(groups);
  for (const [k, v] of Object.entries(advantages.metrics)) metrics[`advantage/${k}`] = v;

  const samples: Sample[] = [];
  let zeroDropped = 0;
  let total = 0;
  for (const [g, group] of groups.entries()) {
    for (const [t, trajectory] of group.trajectories.entries()) {
      const built = input.strategy.toSamples(trajectory);
      for (const [k, v] of Object.entries(built.metrics ?? {}))
        metrics[`strategy/${k}`] = (metrics[`strategy/${k}`] ?? 0) + v;
      const perTurn = advantages.values[g]?.[t] ?? [];
      for (const sample of built.samples) {
        total++;
        fillAdvantages(sample, perTurn);
        if (input.filterZeroAdvantages && sample.advantages.every((a) => a === 0)) {
          zeroDropped++;
          continue;
        }
        samples.push(sample);
      }
    }
  }
  metrics["batch/samples"] = samples.length;
  metrics["batch/zero_advantage_dropped_frac"] = total ? zeroDropped / total : 0;
  metrics["batch/tokens"] = samples.reduce((a, s) => a + s.tokenIds.length, 0);
  metrics["batch/loss_tokens"] = samples.reduce((a, s) => a + s.lossMask.reduce((x, y) => x + y, 0), 0);
  const lags = samples.map((s) => step - s.policyVersion);
  addSummary(metrics, "off_policy/lag", lags);
  if (samples.length === 0) {
    const overlong = metrics["strategy/overlong_dropped"] ?? 0;
    const why = [
      ...(noTurn ? [noTurn] : []),
      ...(overlong > 0 ? [`${overlong} sample(s) longer than the strategy's seq_len were dropped`] : []),
      ...(zeroDropped > 0
        ? [
            `all ${zeroDropped} sample(s) had advantage 0 everywhere and were dropped (orchestrator.filter_zero_advantages)`,
          ]
        : []),
    ];
    warnings.push(`step ${step}: the batch has no samples${why.length ? `: ${why.join("; ")}` : ""}`);
  }
  return { batch: { schemaVersion: SCHEMA_VERSION, step, samples, metrics }, groups, warnings };
}

function fillAdvantages(sample: Sample, perTurn: number[]): void {
  sample.advantages = new Array(sample.tokenIds.length).fill(0);
  for (const span of sample.spans) {
    const value = perTurn[span.turn] ?? 0;
    for (let i = span.start; i < span.end; i++) if (sample.lossMask[i]) sample.advantages[i] = value;
  }
}

/** How a tool error says a command hit its timeout. */
const TIMEOUT = /timed out|timeout/i;

/**
 * How many rollouts ended before their first turn, and why (their stop reasons): a first prompt longer than the
 * model's context window ends every rollout at once, and nothing else says so.
 * @example beforeFirstTurn(used) // "8 of 8 rollouts ended before their first turn (context_length 8: …)"
 */
function beforeFirstTurn(used: Trajectory[]): string | undefined {
  const none = used.filter((t) => t.turns.length === 0);
  if (none.length === 0) return undefined;
  const reasons = new Map<string, number>();
  for (const t of none) {
    const reason = t.stopReason ?? "unknown";
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  const listed = [...reasons].map(([reason, n]) => `${reason} ${n}`).join(", ");
  const hint = reasons.has("context_length")
    ? ": the first prompt (system prompt, demonstrations, task) does not fit the model's context window"
    : "";
  return `${none.length} of ${used.length} rollouts ended before their first turn (${listed}${hint})`;
}

function pct(x: number | undefined): string {
  return `${Math.round((x ?? 0) * 100)}%`;
}
