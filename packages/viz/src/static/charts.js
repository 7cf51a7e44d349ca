// uPlot charts for the air dashboard (window.uPlot from /static/uplot.js, window.AirFormat from format.js).
// AirCharts.line(figure, [{ name, points: [[x, y], …] }]) draws (or updates) lines; AirCharts.heatmap(figure,
// heatmap) draws the advantage distribution per step with its quantile lines.
(() => {
  const COLORS = [
    "#2563eb",
    "#dc2626",
    "#16a34a",
    "#9333ea",
    "#ea580c",
    "#0891b2",
    "#ca8a04",
    "#db2777",
    "#4b5563",
  ];
  const HEIGHT = 220;
  const F = window.AirFormat;
  const charts = new WeakMap();

  function width(figure) {
    return Math.max(280, (figure.querySelector(".plot") || figure).clientWidth || 440);
  }

  /** Axis tick labels; the figure keeps the last ones (`data-x-ticks`, `data-y-ticks`) for tests and tools. */
  function labels(figure, axis, unit) {
    return (_u, values) => {
      const out = unit === "percent" ? values.map(F.percent) : F.ticks(values);
      figure.dataset[`${axis}Ticks`] = JSON.stringify(out);
      return out;
    };
  }

  /**
   * The y range: uPlot's, except for a flat or nearly flat series (float noise such as 1e-17 around 0), which
   * gets a range around its value instead of one a millionth wide.
   */
  function yRange(_u, min, max) {
    if (min === null || max === null) return [0, 1];
    const size = Math.max(Math.abs(min), Math.abs(max));
    if (max - min <= 1e-9 * Math.max(1, size)) {
      const pad = size > 1e-9 ? size * 0.1 : 1;
      return [min - pad, max + pad];
    }
    return window.uPlot.rangeNum(min, max, 0.1, true);
  }

  /** Shares: from 0 (or below) to a little above the largest, never past 100% unless a value is. */
  function shareRange(_u, min, max) {
    if (min === null || max === null) return [0, 1];
    const top = max <= 0 ? 1 : Math.max(max, Math.min(1, max * 1.15 + 0.01));
    return [Math.min(0, min), top];
  }

  /** The x range: uPlot's, except one point gets a range of ±1 around it (not 0–100). */
  function xRange(_u, min, max) {
    if (min === null || max === null) return [0, 1];
    if (min === max) return [min - 1, max + 1];
    return [min, max];
  }

  /** Series on one x grid: the union of their x values, null where a series has no point. */
  function align(series) {
    const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
    const index = new Map(xs.map((x, i) => [x, i]));
    const ys = series.map((s) => {
      const y = new Array(xs.length).fill(null);
      for (const [x, v] of s.points) y[index.get(x)] = v;
      return y;
    });
    return [xs, ...ys];
  }

  function empty(figure, text) {
    const plot = figure.querySelector(".plot");
    const old = charts.get(figure);
    if (old) old.destroy();
    charts.delete(figure);
    plot.innerHTML = "";
    const p = document.createElement("p");
    p.className = "empty";
    p.textContent = text;
    plot.appendChild(p);
    figure.dataset.pointCount = "0";
    figure.dataset.drawn = "1";
  }

  /** Tick spacings for whole-number x values (steps, episodes, turns, k): never a tick between two of them. */
  const WHOLE = [
    1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6,
  ];

  /** `<x>/noise_high` with its `<x>/noise_low`: the audit's evaluation noise, shaded between them. */
  function noiseBands(series) {
    const bands = [];
    series.forEach((s, i) => {
      if (!s.name.endsWith("/noise_high")) return;
      const low = series.findIndex((t) => t.name === s.name.replace(/noise_high$/, "noise_low"));
      if (low >= 0) bands.push({ series: [i + 1, low + 1], fill: "rgba(100, 116, 139, 0.15)" });
    });
    return bands;
  }

  function lineOptions(figure, series) {
    const xLabel = figure.dataset.xLabel || "step";
    const unit = figure.dataset.unit;
    const many = series.reduce((a, s) => Math.max(a, s.points.length), 0) > 60;
    const noise = (s) => /\/noise_(high|low)$/.test(s.name);
    return {
      bands: noiseBands(series),
      width: width(figure),
      height: HEIGHT,
      scales: { x: { time: false, range: xRange }, y: { range: unit === "percent" ? shareRange : yRange } },
      cursor: { drag: { x: true, y: false } },
      legend: { live: true },
      axes: [
        {
          label: xLabel,
          values: labels(figure, "x"),
          size: 36,
          labelSize: 16,
          incrs: series.every((s) => s.points.every((p) => Number.isInteger(p[0]))) ? WHOLE : undefined,
        },
        { values: labels(figure, "y", unit), size: 56 },
      ],
      series: [
        { label: xLabel, value: (_u, v) => (v === null ? "–" : F.value(v)) },
        ...series.map((s, i) => ({
          label: s.name,
          stroke: noise(s) ? "rgba(100, 116, 139, 0.5)" : COLORS[i % COLORS.length],
          width: noise(s) ? 0.5 : 1.5,
          spanGaps: true,
          dash: /baseline$/.test(s.name) || /^baseline\b/.test(s.name) ? [6, 4] : undefined,
          paths: figure.dataset.stepped ? window.uPlot.paths.stepped({ align: 1 }) : undefined,
          points: { show: !many && !noise(s), size: 5 },
          value: (_u, v) => (v === null ? "–" : unit === "percent" ? F.percent(v) : F.value(v)),
        })),
      ],
    };
  }

  /** Draws lines into `figure` (a `figure.chart` with a `.plot` div), or updates the chart already there. */
  function line(figure, series) {
    const shown = series.filter((s) => s.points.length > 0);
    if (shown.length === 0) return empty(figure, "no data yet");
    const data = align(shown);
    const key = shown.map((s) => s.name).join("\u0000");
    const old = charts.get(figure);
    if (old && old.key === key) old.plot.setData(data);
    else {
      if (old) old.destroy();
      const plot = figure.querySelector(".plot");
      plot.innerHTML = "";
      const u = new window.uPlot(lineOptions(figure, shown), data, plot);
      charts.set(figure, { key, plot: u, destroy: () => u.destroy() });
    }
    figure.dataset.pointCount = String(shown.reduce((a, s) => a + s.points.length, 0));
    figure.dataset.drawn = "1";
  }

  /** Blue for a small share of the step's samples, dark blue for most of them. */
  function shade(share, top) {
    const t = top > 0 ? Math.sqrt(share / top) : 0;
    return `rgba(37, 99, 235, ${(0.08 + 0.85 * t).toFixed(3)})`;
  }

  /** The advantage distribution per step: a column of shaded bins per step, with p10/p50/p90 lines over it. */
  function heatmap(figure, map) {
    if (!map || map.steps.length === 0) return empty(figure, "no training samples yet");
    const { steps, edges, share, quantiles } = map;
    const top = Math.max(...share.flat());
    let gap = Infinity;
    for (let i = 1; i < steps.length; i++) gap = Math.min(gap, steps[i] - steps[i - 1]);
    if (!Number.isFinite(gap) || gap <= 0) gap = 1;
    const names = Object.keys(quantiles);
    const draw = (u) => {
      const ctx = u.ctx;
      ctx.save();
      ctx.beginPath();
      ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
      ctx.clip();
      steps.forEach((step, i) => {
        const x0 = u.valToPos(step - gap / 2, "x", true);
        const x1 = u.valToPos(step + gap / 2, "x", true);
        share[i].forEach((s, j) => {
          if (s <= 0) return;
          const y0 = u.valToPos(edges[j + 1], "y", true);
          const y1 = u.valToPos(edges[j], "y", true);
          ctx.fillStyle = shade(s, top);
          ctx.fillRect(Math.min(x0, x1), y0, Math.abs(x1 - x0) + 0.5, y1 - y0 + 0.5);
        });
      });
      ctx.restore();
    };
    const options = {
      width: width(figure),
      height: HEIGHT,
      scales: {
        x: { time: false, range: () => [steps[0] - gap / 2, steps[steps.length - 1] + gap / 2] },
        y: { range: () => [edges[0], edges[edges.length - 1]] },
      },
      legend: { live: true },
      hooks: { drawClear: [draw] },
      axes: [
        { label: "step", values: labels(figure, "x"), size: 36, labelSize: 16, incrs: WHOLE },
        { label: "advantage", values: labels(figure, "y"), size: 56, labelSize: 16 },
      ],
      series: [
        { label: "step", value: (_u, v) => (v === null ? "–" : F.value(v)) },
        ...names.map((name) => ({
          label: name,
          stroke: name === "p50" ? "#dc2626" : "#f59e0b",
          width: name === "p50" ? 2 : 1.25,
          dash: name === "p50" ? undefined : [4, 3],
          points: { show: steps.length <= 60, size: 4 },
          value: (_u, v) => (v === null ? "–" : F.value(v)),
        })),
      ],
    };
    const old = charts.get(figure);
    if (old) old.destroy();
    const plot = figure.querySelector(".plot");
    plot.innerHTML = "";
    const u = new window.uPlot(options, [steps, ...names.map((n) => quantiles[n])], plot);
    charts.set(figure, { key: "heatmap", plot: u, destroy: () => u.destroy() });
    figure.dataset.pointCount = String(share.reduce((a, col) => a + col.filter((s) => s > 0).length, 0));
    figure.dataset.drawn = "1";
  }

  /** Keeps every chart as wide as its box when the window resizes. */
  function resizeAll() {
    for (const figure of document.querySelectorAll("figure.chart")) {
      const c = charts.get(figure);
      if (c) c.plot.setSize({ width: width(figure), height: HEIGHT });
    }
  }
  let pending = 0;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(resizeAll, 100);
  });

  window.AirCharts = { line, heatmap, align };
})();
