import type { StoredTrajectory, StoredTurn } from "@air/logger-sqlite/read";
import { liveStatus, parseJson } from "@air/logger-sqlite/read";
import { html } from "hono/html";
import { CHART_SCRIPTS, type Html, inlineChart, layout, num, runNav, time } from "../html.ts";
import type { RunRow } from "../queries.ts";
import type { GroupTree } from "../tree.ts";
import { groupHref, nodeContext } from "./group.ts";

function kv(record: Record<string, number> | null): Html | string {
  if (!record || Object.keys(record).length === 0) return "–";
  return html`${Object.entries(record).map(([k, v]) => html`<span class="kv">${k} ${num(v, 4)}</span> `)}`;
}

/** The tamper flags the env stored on a turn (`info.tamper`), or []. */
export function tamperFlagsOf(turn: StoredTurn): string[] {
  const tamper = parseJson<{ tamper?: unknown }>(turn.infoJson, {}).tamper;
  return Array.isArray(tamper) ? tamper.map(String) : [];
}

/**
 * One turn: reply, parsed command, observation, reward and scores. `compact` leaves out the prompt; `forked`
 * marks the first turn of a tree node that continues its parent (its prompt is the history up to the fork).
 */
export function turnView(turn: StoredTurn, compact = false, forked = false): Html {
  const errors = [
    turn.parseError && html`<div class="error">format error: ${turn.parseError}</div>`,
    turn.toolError && html`<div class="error">tool error: ${turn.toolError}</div>`,
    turn.evaluationError && html`<div class="error">evaluation error: ${turn.evaluationError}</div>`,
  ].filter(Boolean);
  const flags = tamperFlagsOf(turn);
  if (flags.length > 0) errors.push(html`<div class="error tamper">tamper: ${flags.join(", ")}</div>`);
  const rewritten = turn.idx > 0 && turn.promptBase === 0;
  return html`<section class="turn${turn.scores ? " scored" : ""}${flags.length > 0 ? " tampered" : ""}" data-turn="${turn.idx}">
    <h3>turn ${turn.idx}${turn.stepKind ? html` · <span class="kind">${turn.stepKind}</span>` : ""}
      <span class="reward">reward ${num(turn.reward, 4)}</span></h3>
    <div class="meta">scores ${kv(turn.scores)} · breakdown ${kv(turn.rewardBreakdown)} · tokens
      ${turn.promptTokens ?? "–"}+${turn.completionTokens ?? "–"} · policy v${turn.policyVersion ?? "?"} ·
      generate ${turn.generateMs ?? "–"} ms · env ${turn.envMs ?? "–"} ms · ${turn.finishReason ?? ""}</div>
    ${errors}
    <div class="label">model reply</div><pre class="completion">${turn.completion}</pre>
    <div class="label">parsed command</div><pre class="command">${turn.command ?? "(none)"}</pre>
    <div class="label">observation</div><pre class="observation">${turn.observation}</pre>
    ${
      !compact && rewritten
        ? html`<details><summary>prompt (${forked ? "the history this node continues from its parent" : "history was rewritten at this turn"})</summary>
          ${turn.prompt.map((m) => html`<div class="msg ${m.role}"><b>${m.role}</b><pre>${m.content}</pre></div>`)}</details>`
        : ""
    }</section>`;
}

/** The turn `rl --resume` continued this rollout at (`metrics["resume/turn"]`), when it did. */
export function resumedAt(stored: StoredTrajectory): number | undefined {
  const at = parseJson<Record<string, number>>(stored.trajectory.metricsJson, {})["resume/turn"];
  return typeof at === "number" ? at : undefined;
}

/** Every turn of a trajectory (also served as a live fragment while the rollout runs). */
export function turnList(stored: StoredTrajectory): Html {
  const forked = stored.trajectory.parentJson !== null;
  const resumed = resumedAt(stored);
  return html`${stored.turns.map(
    (x, i) =>
      html`${x.idx === resumed ? html`<div class="resumed-here">resumed here after a restart (rl --resume): the turns above were recorded before it</div>` : ""}${turnView(x, false, forked && i === 0)}`,
  )}`;
}

/** A trajectory's facts (status, scores, turn count) and error; a live fragment while it runs. */
export function trajectoryFacts(stored: StoredTrajectory): Html {
  const t = stored.trajectory;
  const versions = parseJson<number[]>(t.policyVersionsJson, []);
  return html`<dl class="facts">
      <dt>task</dt><dd>${t.task}</dd><dt>example</dt><dd>${t.exampleId}</dd><dt>step</dt><dd>${t.step}</dd>
      <dt>group</dt><dd><a href="${groupHref(t.runId, t.groupId)}">${t.groupId}</a></dd><dt>status</dt><dd>${t.status} (${t.stopReason ?? "–"})</dd>
      <dt>reward</dt><dd>${num(t.reward, 4)}</dd><dt>metric</dt><dd>${t.priorityMetric ?? "–"}</dd>
      <dt>baseline</dt><dd>${num(t.baselineScore, 4)}</dd><dt>final score</dt><dd>${num(t.finalScore, 4)}</dd>
      <dt>improvement</dt><dd>${num(t.improvement, 4)}</dd><dt>policy versions</dt><dd>${versions.join(", ") || "–"}</dd>
      <dt>started</dt><dd>${time(t.startedAt)}</dd><dt>turns</dt><dd data-turns="${stored.turns.length}">${stored.turns.length}</dd>${
        resumedAt(stored) === undefined
          ? ""
          : html`<dt>resumed</dt><dd class="resumed">at turn ${resumedAt(stored)} (rl --resume)</dd>`
      }
    </dl>
    ${t.error ? html`<div class="error">error: ${t.error}</div>` : ""}`;
}

/**
 * The trajectory viewer: facts, for a tree rollout's node its place in the tree (`tree`: parent chain, siblings,
 * children), validation history chart, initial prompt and every turn, with a turn filter.
 */
export function trajectoryPage(
  run: RunRow,
  stored: StoredTrajectory,
  tree?: { groupId: string; tree: GroupTree },
  actions?: Html,
): Html {
  const t = stored.trajectory;
  const history = stored.validationHistory.map((p) => [p.turn, p.score]);
  const baseline = t.baselineScore === null ? [] : stored.turns.map((x) => [x.idx, t.baselineScore]);
  const id = encodeURIComponent(t.rolloutId);
  // A rollout stored as running in a run that ended or died will not get new turns: no live block for it.
  const running = t.status === "running" && liveStatus(run) === "running";
  const node = tree?.tree.nodes.get(t.rolloutId);
  return layout(
    `${run.name}: ${t.rolloutId}`,
    html`${runNav(run.id, run.name, "trajectories")}
    <h1>Trajectory ${t.rolloutId}</h1>
    ${
      running
        ? html`<div data-fragment="/runs/${run.id}/fragments/facts/${id}">${trajectoryFacts(stored)}</div>`
        : trajectoryFacts(stored)
    }
    ${node && tree ? nodeContext(run.id, tree.groupId, tree.tree, node) : ""}
    ${actions ?? ""}
    ${inlineChart("Validation history", { score: history, baseline }, { xLabel: "turn" })}
    <details><summary>initial prompt (${stored.initialMessages.length} messages)</summary>
      ${stored.initialMessages.map((m) => html`<div class="msg ${m.role}"><b>${m.role}</b><pre>${m.content}</pre></div>`)}
    </details>
    <div class="turn-filter"><input type="search" id="turn-filter" placeholder="filter turns by text">
      <label><input type="checkbox" id="only-scored"> only scored turns</label>
      <label><input type="checkbox" id="only-flagged"> only flagged turns (${
        stored.turns.filter((x) => tamperFlagsOf(x).length > 0).length
      })</label></div>
    ${
      running
        ? html`<div id="live" data-run="${run.id}" data-status="running"><span class="dot"></span>
          <span id="live-text">running: new turns appear here</span></div>
          <div class="turns" data-fragment="/runs/${run.id}/fragments/turns/${id}">${turnList(stored)}</div>`
        : html`<div class="turns">${turnList(stored)}</div>`
    }`,
    CHART_SCRIPTS,
  );
}

/** Two trajectories side by side, turn by turn. */
export function comparePage(run: RunRow, a: StoredTrajectory, b: StoredTrajectory): Html {
  const column = (s: StoredTrajectory) => html`<div class="column">
    <h2><a href="/runs/${run.id}/trajectories/${encodeURIComponent(s.trajectory.rolloutId)}">${s.trajectory.rolloutId}</a></h2>
    <p>${s.trajectory.task} · step ${s.trajectory.step} · reward ${num(s.trajectory.reward, 4)} · final
      ${num(s.trajectory.finalScore, 4)} · improvement ${num(s.trajectory.improvement, 4)}</p>
    ${s.turns.map((x) => turnView(x, true))}</div>`;
  return layout(
    `${run.name}: compare`,
    html`${runNav(run.id, run.name, "trajectories")}<div class="compare">${column(a)}${column(b)}</div>`,
  );
}
