import { type StoreDb, storedEvaluations, taskSummary } from "@air/logger-sqlite";
import { html } from "hono/html";
import { type Html, layout, num, pct, runNav } from "../html.ts";
import type { RunRow } from "../queries.ts";

/** Per-task summary: baseline, average and best final score, improvement, episode count. */
export function tasksPage(db: StoreDb, run: RunRow): Html {
  const rows = taskSummary(db, run.id);
  const evaluations = storedEvaluations(db, run.id);
  return layout(
    `${run.name}: tasks`,
    html`${runNav(run.id, run.name, "tasks")}<h2>Per-task summary</h2>
    ${
      rows.length === 0
        ? html`<p class="empty">No finished trajectories yet.</p>`
        : html`<table class="tasks"><thead><tr><th>task</th><th>episodes</th><th>baseline</th><th>avg final</th>
          <th>best final</th><th>avg improvement</th><th>best improvement</th><th>validated</th><th>avg reward</th>
          </tr></thead><tbody>${rows.map(
            (
              r,
            ) => html`<tr><td><a href="/runs/${run.id}/trajectories?task=${encodeURIComponent(r.task)}">${r.task}</a></td>
            <td>${r.episodes}</td><td>${num(r.baseline)}</td><td>${num(r.avgFinal)}</td><td>${num(r.bestFinal)}</td>
            <td>${num(r.avgImprovement)}</td><td>${num(r.bestImprovement)}</td><td>${pct(r.validateRate)}</td>
            <td>${num(r.avgReward)}</td></tr>`,
          )}</tbody></table>`
    }
    <h2>Evaluations</h2>
    ${
      evaluations.length === 0
        ? html`<p class="empty">No evaluation results for this run.</p>`
        : html`<table class="evaluations"><thead><tr><th>task</th><th>policy</th><th>checkpoint</th><th>metric</th>
          <th>value</th><th>rows</th></tr></thead><tbody>${evaluations.map(
            (
              e,
            ) => html`<tr><td>${e.task}</td><td>${e.policy}</td><td>${e.checkpoint ?? "–"}</td><td>${e.metric}</td>
            <td>${num(e.value, 4)}</td><td>${e.n}</td></tr>`,
          )}</tbody></table>`
    }`,
  );
}
