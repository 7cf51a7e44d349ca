import { html } from "hono/html";
import { type Html, layout, runNav, time } from "../html.ts";
import type { RunRow } from "../queries.ts";

/** One replay started from the dashboard: running, done (the report text) or failed (why). */
export interface ReplayJob {
  state: "running" | "done" | "failed";
  times: number;
  startedAt: number;
  endedAt?: number;
  text?: string;
  error?: string;
}

/** The Replay button of a trajectory page: replays its commands N times in fresh sandboxes. */
export function replayForm(runId: number, rolloutId: string, maxTimes = 10): Html {
  return html`<form class="replay-form" method="post"
    action="/runs/${runId}/trajectories/${encodeURIComponent(rolloutId)}/replay">
    <label>replay the commands <input type="number" name="times" value="3" min="1" max="${maxTimes}"> times</label>
    <button type="submit">Replay</button>
    <span class="note">fresh sandboxes of the run's env, scripted policy: score spread and where observations diverge</span>
  </form>`;
}

/** A replay's status: running (refreshes every 2 s), its report, or why it failed; the button when none ran. */
export function replayPage(
  run: RunRow,
  rolloutId: string,
  job: ReplayJob | undefined,
  available: boolean,
  maxTimes: number,
): Html {
  const back = html`<p><a href="/runs/${run.id}/trajectories/${encodeURIComponent(rolloutId)}">back to the trajectory</a></p>`;
  let body: Html;
  if (!job)
    body = available
      ? html`<p>No replay of this trajectory yet.</p>${replayForm(run.id, rolloutId, maxTimes)}`
      : html`<p class="error">Replay is not available here: start the dashboard with <code>bun run viz &lt;run dir&gt;</code>.</p>`;
  else if (job.state === "running")
    body = html`<meta http-equiv="refresh" content="2">
      <p class="replay-status" data-state="running">replaying ${job.times}× since ${time(job.startedAt)}
        (${Math.round((Date.now() - job.startedAt) / 1000)} s); this page refreshes until it is done</p>`;
  else if (job.state === "failed")
    body = html`<p class="replay-status error" data-state="failed">replay failed: ${job.error}</p>
      ${replayForm(run.id, rolloutId, maxTimes)}`;
  else
    body = html`<p class="replay-status" data-state="done">replayed ${job.times}× in
        ${Math.round(((job.endedAt ?? job.startedAt) - job.startedAt) / 1000)} s</p>
      <pre class="replay-report">${job.text}</pre>${replayForm(run.id, rolloutId, maxTimes)}`;
  return layout(
    `${run.name}: replay of ${rolloutId}`,
    html`${runNav(run.id, run.name, "trajectories")}<h1>Replay of ${rolloutId}</h1>${back}${body}`,
  );
}
