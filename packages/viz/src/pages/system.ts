import { closeSync, openSync, readSync, statSync } from "node:fs";
import { liveStatus, type StoreDb, systemState } from "@air/logger-sqlite/read";
import { html } from "hono/html";
import { CHART_SCRIPTS, type Html, layout, runNav, time } from "../html.ts";
import type { RunRow } from "../queries.ts";

/** The last `lines` lines of a log file (reads at most the last 64 KB), or a note why not. */
export function tailFile(path: string | null, lines = 15): string {
  if (!path) return "";
  try {
    const size = statSync(path).size;
    const length = Math.min(size, 65_536);
    const buffer = Buffer.alloc(length);
    const fd = openSync(path, "r");
    try {
      readSync(fd, buffer, 0, length, size - length);
    } finally {
      closeSync(fd);
    }
    return buffer
      .toString("utf8")
      .split("\n")
      .slice(-lines - 1)
      .join("\n")
      .trimEnd();
  } catch (error) {
    return `(cannot read ${path}: ${(error as Error).message})`;
  }
}

/** Sandboxes per Docker host (only when the env reports hosts): active and shown. */
function hostsTable(boxes: Array<{ host: string | null; state: string }>): Html | string {
  const byHost = new Map<string, { active: number; shown: number }>();
  for (const b of boxes) {
    if (b.host === null) continue;
    const entry = byHost.get(b.host) ?? { active: 0, shown: 0 };
    entry.shown++;
    if (b.state !== "removed") entry.active++;
    byHost.set(b.host, entry);
  }
  if (byHost.size === 0) return "";
  return html`<table class="hosts"><thead><tr><th>docker host</th><th>active sandboxes</th><th>shown</th></tr></thead>
    <tbody>${[...byHost.entries()].map(
      ([host, n]) => html`<tr><td>${host}</td><td>${n.active}</td><td>${n.shown}</td></tr>`,
    )}</tbody></table>`;
}

/** Processes, the container pool and recent warnings/errors; served whole and as a live fragment. */
export function systemFragment(db: StoreDb, runId: number): Html {
  const { processes: procs, sandboxes: boxes, logs } = systemState(db, runId);
  const active = boxes.filter((b) => b.state !== "removed").length;
  return html`<h2>Processes</h2>
    ${
      procs.length === 0
        ? html`<p class="empty">No processes reported.</p>`
        : html`<table class="processes"><thead><tr><th>role</th><th>pid</th><th>state</th><th>updated</th><th>last log lines</th></tr></thead>
        <tbody>${procs.map(
          (
            p,
          ) => html`<tr><td>${p.role}</td><td>${p.pid ?? "–"}</td><td class="state-${p.state}">${p.state}</td>
          <td>${time(p.updatedAt)}</td><td>${p.logPath ? html`<div class="path">${p.logPath}</div><pre class="tail">${tailFile(p.logPath)}</pre>` : "–"}</td></tr>`,
        )}</tbody></table>`
    }
    <h2>Container pool <small>${active} active of ${boxes.length} shown</small></h2>
    ${hostsTable(boxes)}
    ${
      boxes.length === 0
        ? html`<p class="empty">No sandboxes reported.</p>`
        : html`<table class="sandboxes"><thead><tr><th>sandbox</th><th>host</th><th>rollout</th><th>state</th><th>current command</th><th>updated</th></tr></thead>
        <tbody>${boxes.map(
          (
            b,
          ) => html`<tr><td>${b.sandboxId}</td><td>${b.host ?? "–"}</td><td>${b.rolloutId ?? "–"}</td><td class="state-${b.state}">${b.state}</td>
          <td><code>${b.command ?? ""}</code></td><td>${time(b.updatedAt)}</td></tr>`,
        )}</tbody></table>`
    }
    <h2>Recent log lines</h2>
    ${
      logs.length === 0
        ? html`<p class="empty">No log lines.</p>`
        : html`<table class="logs"><tbody>${logs.map(
            (
              l,
            ) => html`<tr class="level-${l.level}"><td>${time(l.timeMs)}</td><td>${l.level}</td><td>${l.source}</td>
            <td><pre>${l.message}</pre></td></tr>`,
          )}</tbody></table>`
    }`;
}

export function systemPage(db: StoreDb, run: RunRow): Html {
  return layout(
    `${run.name}: system`,
    html`${runNav(run.id, run.name, "system")}
    <div id="live" data-run="${run.id}" data-status="${liveStatus(run)}"><span class="dot"></span><span id="live-text">${liveStatus(run)}</span></div>
    <div data-fragment="/runs/${run.id}/fragments/system">${systemFragment(db, run.id)}</div>`,
    CHART_SCRIPTS,
  );
}
