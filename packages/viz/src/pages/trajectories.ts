import { listTrajectories, type SearchIndex, type StoreDb, treeGroupIds } from "@air/logger-sqlite/read";
import { html } from "hono/html";
import { type Html, layout, num, runNav } from "../html.ts";
import type { RunRow } from "../queries.ts";
import type { TrajectoryQuery } from "../trajectories.ts";
import { groupHref, trajectoryHref } from "./group.ts";

function href(runId: number, query: TrajectoryQuery, page: number): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...query, page }))
    if (v !== undefined && v !== "" && !(k === "per" && v === 50) && !(k === "sort" && v === "step"))
      p.set(k, String(v));
  return `/runs/${runId}/trajectories?${p}`;
}

/** The trajectory list: filters, search, pagination, a compare form; a tree rollout's nodes link to their tree. */
export function trajectoriesPage(
  db: StoreDb,
  run: RunRow,
  query: TrajectoryQuery,
  index?: SearchIndex | null,
): Html {
  const { total, capped, rows, tasks, pages } = listTrajectories(db, run.id, query, index);
  const trees = treeGroupIds(
    db,
    run.id,
    rows.map((t) => t.groupId),
  );
  const selected = (a: unknown, b: unknown) => (a === b ? "selected" : "");
  return layout(
    `${run.name}: trajectories`,
    html`${runNav(run.id, run.name, "trajectories")}
    <form class="filters" method="get" action="/runs/${run.id}/trajectories">
      <input type="search" name="q" placeholder="search replies, commands, observations" value="${query.q ?? ""}">
      <select name="task"><option value="">all tasks</option>
        ${tasks.map((t) => html`<option value="${t}" ${selected(t, query.task)}>${t}</option>`)}</select>
      <input type="number" name="step" min="0" placeholder="step" value="${query.step ?? ""}">
      <select name="status"><option value="">any status</option>
        ${["done", "failed", "running"].map((s) => html`<option ${selected(s, query.status)}>${s}</option>`)}</select>
      <select name="validated"><option value="">validated?</option>
        <option value="yes" ${selected("yes", query.validated)}>validated</option>
        <option value="no" ${selected("no", query.validated)}>never validated</option></select>
      <label><input type="checkbox" name="flagged" value="yes" ${query.flagged === "yes" ? "checked" : ""}> flagged only</label>
      <select name="sort">${["step", "reward", "improvement", "final_score"].map(
        (s) => html`<option ${selected(s, query.sort)}>${s}</option>`,
      )}</select>
      <button>filter</button></form>
    <p class="count">${capped ? `at least ${total}` : total} trajectories · page ${query.page} of ${capped ? `${pages}+` : pages}</p>
    <form method="get" action="/runs/${run.id}/compare" class="compare-form">
    <table class="trajectories"><thead><tr><th>A</th><th>B</th><th>rollout</th><th>step</th><th>task</th><th>example</th>
      <th>status</th><th>reward</th><th>final</th><th>baseline</th><th>improvement</th><th>turns</th><th>tokens</th><th title="turns the env flagged as tampering">flagged</th></tr></thead>
    <tbody>${rows.map(
      (
        t,
      ) => html`<tr class="status-${t.status}${t.flaggedTurns > 0 ? " flagged" : ""}"><td><input type="radio" name="a" value="${t.rolloutId}"></td>
        <td><input type="radio" name="b" value="${t.rolloutId}"></td>
        <td><a href="${trajectoryHref(run.id, t.rolloutId)}">${t.rolloutId}</a>${
          trees.has(t.groupId)
            ? html` <a class="tree-link" href="${groupHref(run.id, t.groupId)}" title="this rollout is a node of a tree: open the tree">tree</a>`
            : ""
        }</td>
        <td>${t.step}</td><td>${t.task}</td><td>${t.exampleId}</td>
        <td title="${t.error ?? ""}">${t.status}${t.stopReason ? html` (${t.stopReason})` : ""}</td>
        <td>${num(t.reward)}</td><td>${num(t.finalScore)}</td><td>${num(t.baselineScore)}</td>
        <td>${num(t.improvement)}</td><td>${t.turnCount}</td><td>${t.completionTokens ?? "–"}</td>
        <td>${t.flaggedTurns > 0 ? html`<span class="flag">${t.flaggedTurns}</span>` : ""}</td></tr>`,
    )}</tbody></table><button>compare A and B side by side</button></form>
    <nav class="pages">
      ${query.page > 1 ? html`<a href="${href(run.id, query, query.page - 1)}" rel="prev">← previous</a>` : ""}
      ${query.page < pages ? html`<a href="${href(run.id, query, query.page + 1)}" rel="next">next →</a>` : ""}
    </nav>`,
  );
}
