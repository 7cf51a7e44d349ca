// A small canvas line chart for the air dashboard: axes, ticks, grid, legend, lines with dots.
// Usage: AirChart.draw(canvas, [{ name: "reward/mean", points: [[0, 0.1], [1, 0.3]] }], { xLabel: "step" });
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

  function niceStep(range, count) {
    const raw = range / Math.max(1, count);
    const power = 10 ** Math.floor(Math.log10(raw));
    const unit = raw / power;
    const nice = unit < 1.5 ? 1 : unit < 3 ? 2 : unit < 7 ? 5 : 10;
    return nice * power;
  }

  function ticks(min, max, count) {
    if (min === max) return [min];
    const step = niceStep(max - min, count);
    const out = [];
    for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step)
      out.push(Number(v.toPrecision(12)));
    return out;
  }

  function label(v) {
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(1);
    return String(Number(v.toPrecision(4)));
  }

  function extent(series, index) {
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (const s of series)
      for (const p of s.points) {
        if (p[index] < min) min = p[index];
        if (p[index] > max) max = p[index];
      }
    if (min === max) {
      const pad = min === 0 ? 1 : Math.abs(min) * 0.1;
      return [min - pad, max + pad];
    }
    return [min, max];
  }

  function draw(canvas, series, options = {}) {
    const ratio = window.devicePixelRatio || 1;
    const cssWidth = canvas.clientWidth || canvas.width;
    const cssHeight = canvas.clientHeight || canvas.height;
    canvas.width = Math.round(cssWidth * ratio);
    canvas.height = Math.round(cssHeight * ratio);
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, cssWidth, cssHeight);
    ctx.font = "11px system-ui, sans-serif";
    const shown = series.filter((s) => s.points.length > 0);
    canvas.dataset.pointCount = String(shown.reduce((a, s) => a + s.points.length, 0));
    if (shown.length === 0) {
      ctx.fillStyle = "#6b7280";
      ctx.textAlign = "center";
      ctx.fillText("no data yet", cssWidth / 2, cssHeight / 2);
      return;
    }
    const legendRows = [];
    let row = [];
    let used = 0;
    for (const [i, s] of shown.entries()) {
      const w = ctx.measureText(s.name).width + 22;
      if (used + w > cssWidth - 50 && row.length) {
        legendRows.push(row);
        row = [];
        used = 0;
      }
      row.push({ name: s.name, color: COLORS[i % COLORS.length], width: w });
      used += w;
    }
    legendRows.push(row);
    const top = 8 + legendRows.length * 14;
    const left = 50;
    const right = cssWidth - 10;
    const bottom = cssHeight - 30;
    const [x0, x1] = extent(shown, 0);
    const [y0, y1] = extent(shown, 1);
    const sx = (x) => left + ((x - x0) / (x1 - x0)) * (right - left);
    const sy = (y) => bottom - ((y - y0) / (y1 - y0)) * (bottom - top);

    ctx.strokeStyle = "#e5e7eb";
    ctx.fillStyle = "#374151";
    ctx.lineWidth = 1;
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (const t of ticks(y0, y1, 5)) {
      ctx.beginPath();
      ctx.moveTo(left, sy(t));
      ctx.lineTo(right, sy(t));
      ctx.stroke();
      ctx.fillText(label(t), left - 4, sy(t));
    }
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    const integerX = shown.every((s) => s.points.every((p) => Number.isInteger(p[0])));
    for (const t of ticks(x0, x1, 6))
      if (!integerX || Number.isInteger(t)) ctx.fillText(label(t), sx(t), bottom + 4);
    ctx.fillText(options.xLabel || "step", (left + right) / 2, bottom + 16);
    ctx.strokeStyle = "#9ca3af";
    ctx.beginPath();
    ctx.moveTo(left, top);
    ctx.lineTo(left, bottom);
    ctx.lineTo(right, bottom);
    ctx.stroke();

    for (const [i, s] of shown.entries()) {
      const color = COLORS[i % COLORS.length];
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      for (const [j, p] of s.points.entries()) {
        if (j === 0) ctx.moveTo(sx(p[0]), sy(p[1]));
        else ctx.lineTo(sx(p[0]), sy(p[1]));
      }
      ctx.stroke();
      if (s.points.length <= 60)
        for (const p of s.points) {
          ctx.beginPath();
          ctx.arc(sx(p[0]), sy(p[1]), 2.5, 0, Math.PI * 2);
          ctx.fill();
        }
    }
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    legendRows.forEach((items, r) => {
      let x = left;
      for (const item of items) {
        ctx.fillStyle = item.color;
        ctx.fillRect(x, 4 + r * 14 + 3, 10, 3);
        ctx.fillStyle = "#111827";
        ctx.fillText(item.name, x + 14, 4 + r * 14 + 5);
        x += item.width;
      }
    });
  }

  window.AirChart = { draw, ticks };
})();
