import { html } from "hono/html";

export type Html = ReturnType<typeof html>;

/** A number for a table cell: fixed digits, or "–" when missing. */
export function num(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  return Number.isInteger(x) && Math.abs(x) < 1e9 ? String(x) : x.toFixed(digits);
}

export function pct(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  return `${Math.round(x * 100)}%`;
}

export function time(ms: number | null | undefined): string {
  return ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) : "–";
}

/** Navigation of a run's pages. */
export function runNav(runId: number, name: string, active: string): Html {
  const link = (href: string, label: string) =>
    html`<a href="${href}" class="${active === label ? "active" : ""}">${label}</a>`;
  return html`<nav class="run-nav"><a href="/">runs</a> / <strong>${name}</strong>
    ${link(`/runs/${runId}`, "charts")} ${link(`/runs/${runId}/tasks`, "tasks")}
    ${link(`/runs/${runId}/trajectories`, "trajectories")} ${link(`/runs/${runId}/system`, "system")}
    <a href="/runs/${runId}/export.json">export JSON</a></nav>`;
}

/** Scripts of a page with charts or live updates, in load order (uPlot first). */
export const CHART_SCRIPTS = ["uplot.js", "format.js", "charts.js", "dashboard.js"];

/** The page shell: local stylesheet and scripts only (the CSP forbids inline scripts). */
export function layout(title: string, body: Html | Html[], scripts: string[] = []): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · air</title>
<link rel="stylesheet" href="/static/uplot.css">
<link rel="stylesheet" href="/static/style.css">
</head>
<body>
<header><a href="/" class="brand">air</a> <span>${title}</span></header>
<main>${body}</main>
${scripts.map((s) => html`<script src="/static/${s}"></script>`)}
</body>
</html>`;
}

export interface ChartOptions {
  /** Label of the x axis ("step" unless told). */
  xLabel?: string;
  /** "percent": the y values are shares in [0, 1], labelled as percentages. */
  unit?: "percent";
  /** "heatmap": the advantage distribution (`heatmap` of the series API) instead of lines. */
  kind?: "line" | "heatmap";
  /** A note under the title. */
  note?: string;
  /** Draw steps (a performance profile) instead of straight segments between points. */
  stepped?: boolean;
}

/**
 * A uPlot chart the dashboard script fills from `/api/runs/:id/series`; `series` may use `*` wildcards.
 * @example chart("Reward", ["reward/mean", "reward/min", "reward/max"])
 */
export function chart(title: string, series: string[], options: ChartOptions = {}): Html {
  return html`<figure class="chart" data-kind="${options.kind ?? "line"}" data-series="${JSON.stringify(series)}"
    data-x-label="${options.xLabel ?? "step"}" data-unit="${options.unit ?? ""}"><figcaption>${title}</figcaption>
    ${options.note ? html`<p class="note">${options.note}</p>` : ""}<div class="plot"></div></figure>`;
}

/**
 * A uPlot chart of inline points (`name → [[x, y], …]`), drawn without a request.
 * @example inlineChart("Validation history", { score: [[0, 0.5]] }, { xLabel: "turn" })
 */
export function inlineChart(
  title: string,
  points: Record<string, unknown[]>,
  options: ChartOptions = {},
): Html {
  return html`<figure class="chart" data-kind="line" data-points="${JSON.stringify(points)}"
    data-x-label="${options.xLabel ?? "step"}" data-unit="${options.unit ?? ""}"
    data-stepped="${options.stepped ? "1" : ""}"><figcaption>${title}</figcaption>
    <div class="plot"></div></figure>`;
}
