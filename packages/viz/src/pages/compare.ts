import { html } from "hono/html";
import type { ComparisonView } from "../compare.ts";
import { CHART_SCRIPTS, type Html, inlineChart, layout } from "../html.ts";

/** `eval compare` results: the AUP / performance-profile charts (MLGym's) and the comparison table. */
export function comparePage(view: ComparisonView | undefined): Html {
  return layout(
    "eval compare",
    html`<nav class="run-nav"><a href="/">runs</a> / <strong>eval compare</strong></nav>
    <h1>Evaluations compared</h1>
    ${
      !view
        ? html`<p class="empty">No comparison: start the dashboard with <code>--compare a.json,b.json</code>
          (the report files of <code>bun run eval</code>).</p>`
        : html`<p class="hint">ρ(τ): the share of tasks on which a method is within a factor 10^τ of the best
          method (baseline included); AUP is the area under ρ — higher is better. Methods: ${view.methods.join(", ")}.</p>
          ${
            view.profiles.length === 0
              ? html`<p class="empty">No MLGym-scored task in these reports: no performance profile.</p>`
              : html`<div class="charts">${view.profiles.map((p) =>
                  inlineChart(p.title, p.points, {
                    xLabel: "τ (log10 of the performance ratio)",
                    unit: "percent",
                    stepped: true,
                  }),
                )}</div>`
          }
          <h2>Per task</h2><pre class="table">${view.table}</pre>`
    }`,
    CHART_SCRIPTS,
  );
}
