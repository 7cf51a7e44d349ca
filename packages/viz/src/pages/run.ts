import { flatRewardRows, liveStatus, metricNames, type StoreDb } from "@air/logger-sqlite/read";
import { html } from "hono/html";
import { CHART_SCRIPTS, chart, type Html, layout, num, pct, runNav } from "../html.ts";
import type { RunRow } from "../queries.ts";

/** A trainer metric as trainers report it: bare (the test kit), `trainer/…` (prime-rl, tiny) or `train/…`. */
const named = (name: string) =>
  ["", "trainer/", "train/"].flatMap((p) => [`trainer/${p}${name}`, `trainer/${p}${name}/*`]);

const TRAINER_CHARTS: Array<[string, string[]]> = [
  ["Trainer loss", named("loss")],
  ["Grad norm", named("grad_norm")],
  ["Learning rate", [...named("lr"), ...named("learning_rate")]],
  ["Entropy", named("entropy")],
  ["Mismatch KL (trainer vs inference logprobs)", named("mismatch_kl")],
];
/** Trainer metrics the charts above and the step-time chart show; any other gets a chart of its own. */
const KNOWN_TRAINER =
  /^((trainer|train)\/)?(loss|grad_norm|lr|learning_rate|entropy|mismatch_kl)(\/|$)|^((trainer|train)\/)?time\//;

/** The flat-reward panel: per step, the causes that make every advantage 0. Also served as a live fragment. */
export function flatPanel(db: StoreDb, runId: number): Html {
  const rows = flatRewardRows(db, runId);
  if (rows.length === 0) return html`<p class="empty">No finished steps yet.</p>`;
  return html`<table class="flat"><thead><tr><th>step</th><th>reward mean ± std</th><th>never validated</th>
    <th>zero-variance groups</th><th>format errors</th><th>tool errors</th><th>timeouts</th><th>evaluation errors</th>
    <th>failed rollouts</th><th>samples</th><th>warnings</th></tr></thead><tbody>
    ${rows.map((r) => {
      const m = r.metrics;
      const bad = (x: number | undefined, limit: number) => ((x ?? 0) >= limit ? "bad" : "");
      return html`<tr data-step="${r.step}"><td>${r.step}</td><td>${num(m["reward/mean"])} ± ${num(m["reward/std"])}</td>
        <td class="${bad(m["rollout/no_score_frac"], 0.5)}">${pct(m["rollout/no_score_frac"])}</td>
        <td class="${bad(m["group/zero_variance_frac"], 0.5)}">${pct(m["group/zero_variance_frac"])}</td>
        <td class="${bad(m["rollout/parse_error_frac"], 0.25)}">${pct(m["rollout/parse_error_frac"])}</td>
        <td>${pct(m["rollout/tool_error_frac"])}</td><td>${r.timeouts}</td>
        <td class="${bad(m["rollout/evaluation_error_frac"], 0.25)}">${pct(m["rollout/evaluation_error_frac"])}</td>
        <td>${num(m["rollout/failed"])}</td><td>${num(m["batch/samples"])}</td>
        <td class="warnings">${r.warnings.map((w) => html`<div>${w}</div>`)}</td></tr>`;
    })}</tbody></table>`;
}

/** A titled group of charts. */
function group(title: string, charts: Html[]): Html {
  return html`<section class="chart-group"><h3>${title}</h3><div class="charts">${charts}</div></section>`;
}

/** A run's charts (uPlot), the flat-reward panel and live updates (server-sent events). */
export function runPage(db: StoreDb, run: RunRow): Html {
  const trainerNames = metricNames(db, run.id)
    .filter((m) => m.source === "trainer" && !KNOWN_TRAINER.test(m.name))
    .map((m) => m.name);
  const state = liveStatus(run);
  const groups = [
    group("Reward and scores", [
      chart("Reward (mean, min, max)", ["reward/mean", "reward/min", "reward/max"]),
      chart("Final score vs baseline per task (dashed: baseline; shaded: ± the audit's evaluation noise)", [
        "task/*",
      ]),
      chart("Improvement per episode", ["derived/improvement_per_episode"], { xLabel: "episode" }),
      chart("Validate rate", ["derived/validate_rate"], { unit: "percent" }),
    ]),
    group("Why the reward is flat", [
      chart(
        "Zero-variance and failure rates",
        [
          "group/zero_variance_frac",
          "derived/failed_frac",
          "rollout/no_score_frac",
          "rollout/parse_error_frac",
          "rollout/evaluation_error_frac",
          "rollout/max_turns_frac",
          "rollout/no_turn_frac",
        ],
        { unit: "percent" },
      ),
      chart("Errors and timeouts (counts)", [
        "derived/parse_errors",
        "derived/tool_errors",
        "derived/timeouts",
        "derived/evaluation_errors",
        "derived/failed_rollouts",
      ]),
    ]),
    group("Advantages", [
      chart("Advantage distribution per step (shade: share of samples; lines: p10, p50, p90)", ["heatmap"], {
        kind: "heatmap",
      }),
      chart("Advantage stats", ["advantage/*"]),
    ]),
    group("Trainer", [
      ...TRAINER_CHARTS.map(([title, series]) => chart(title, series)),
      ...trainerNames.map((n) => chart(`Trainer: ${n}`, [`trainer/${n}`])),
    ]),
    group("Lengths", [
      chart("Completion tokens per rollout", [
        "rollout/completion_tokens/mean",
        "rollout/completion_tokens/max",
        "rollout/completion_tokens/min",
      ]),
      chart("Training sample length (tokens, mean)", ["derived/sample_tokens_mean"]),
      chart("Turns per rollout", ["rollout/turns/mean", "rollout/turns/max"]),
    ]),
    group("Throughput", [
      chart("Turns per second", ["throughput/turns_per_s", "derived/turns_per_s"]),
      chart("Tokens per second (training batch)", ["derived/tokens_per_s"]),
      chart("Step time (s)", [
        "time/step_s",
        "trainer/time/*",
        "trainer/trainer/time/*",
        "trainer/train/time/*",
      ]),
      chart("Off-policy lag (steps)", ["off_policy/lag/mean", "off_policy/lag/max"]),
    ]),
    group("Evaluation", [
      chart("pass@k over training steps (periodic eval, eval_every)", ["eval/pass@*"], { unit: "percent" }),
      chart("Eval reward per task (eval_every)", ["eval/reward/mean", "eval/*/reward/mean"]),
      chart("pass@k by k (stored evaluations)", ["pass@k/*", "pass@*"], { xLabel: "k", unit: "percent" }),
    ]),
  ];
  return layout(
    run.name,
    html`${runNav(run.id, run.name, "charts")}
    <div id="live" data-run="${run.id}" data-status="${state}"><span class="dot"></span>
      <span id="live-text">${state}</span></div>
    <section><h2>Why is my reward flat?</h2>
      <p class="hint">Every advantage is 0 when all rollouts of a group get the same reward: usually because they
      never validated, broke the command format, timed out, or the evaluation failed.</p>
      <div data-fragment="/runs/${run.id}/fragments/flat">${flatPanel(db, run.id)}</div></section>
    <section><h2>Charts</h2>${groups}</section>`,
    CHART_SCRIPTS,
  );
}
