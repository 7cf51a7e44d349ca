import { readLatestAudits, type StoreDb, storedEvaluations, taskSummary } from "@air/logger-sqlite/read";
import { html } from "hono/html";
import { type Html, layout, num, pct, runNav } from "../html.ts";
import type { RunRow } from "../queries.ts";

/** Per-task summary: baseline, average and best final score, improvement, episode count; evaluations; the latest task audit. */
export function tasksPage(db: StoreDb, run: RunRow): Html {
  const rows = taskSummary(db, run.id);
  const evaluations = storedEvaluations(db, run.id);
  const audits = readLatestAudits(db);
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
    }
    <h2>Task audit</h2>
    ${
      audits.length === 0
        ? html`<p class="empty">No audit in this store (<code>bun run audit &lt;config&gt;</code> writes one).</p>`
        : html`<p>${audits.filter((a) => a.critical).length} critical finding(s), latest audit per task.</p>
          <table class="audits"><thead><tr><th>task</th><th>probe</th><th>group</th><th>verdict</th><th>score</th>
          <th>evidence</th></tr></thead><tbody>${audits.map(
            (a) => html`<tr class="${a.critical ? "critical" : ""}"><td>${a.task}</td><td>${a.probe}</td>
            <td>${a.group}</td><td>${a.critical ? html`<strong>${a.verdict}</strong>` : a.verdict}</td>
            <td>${num(a.score, 4)}</td><td>${a.evidence}</td></tr>`,
          )}</tbody></table>`
    }`,
  );
}
