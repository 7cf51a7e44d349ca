import { listRuns, type StoreDb } from "@air/logger-sqlite/read";
import { html } from "hono/html";
import { type Html, layout, num, time } from "../html.ts";

/** The runs list. */
export function runsPage(db: StoreDb, withComparison = false): Html {
  const rows = listRuns(db);
  return layout(
    "runs",
    html`<h1>Runs</h1>
    ${withComparison ? html`<p><a href="/eval-compare">Evaluations compared (AUP, performance profiles)</a></p>` : ""}
    ${
      rows.length === 0
        ? html`<p class="empty">No runs in this database yet.</p>`
        : html`<table class="runs"><thead><tr><th>id</th><th>name</th><th>source</th><th>status</th><th>started</th>
          <th>steps</th><th>trajectories</th><th>last reward</th></tr></thead><tbody>
          ${rows.map(
            (r) => html`<tr><td>${r.id}</td><td><a href="/runs/${r.id}">${r.name}</a></td><td>${r.source}</td>
              <td class="status-${r.state}" title="${r.state === "dead" ? "stored as running, but its launcher stopped writing (no heartbeat): killed" : ""}">${r.state}${r.resumes ? html` <small>(resumed ×${r.resumes})</small>` : ""}</td><td>${time(r.startedAt)}</td><td>${r.stepCount}</td>
              <td>${r.trajectoryCount}</td><td>${num(r.lastReward)}</td></tr>`,
          )}</tbody></table>`
    }`,
  );
}
