// Number formatting for the dashboard's chart axes and legends: short, human, never "-5.6e-17".
// AirFormat.ticks(values, span) labels one axis's ticks; AirFormat.value(v) labels one value (legend, tooltip).
(() => {
  const UNITS = [
    [1e12, "T"],
    [1e9, "G"],
    [1e6, "M"],
    [1e3, "k"],
  ];

  /** Drops trailing zeros of a fixed-point string ("1.500" → "1.5", "2.000" → "2"). */
  function trim(s) {
    return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
  }

  /** Decimals that write `step` exactly (0.25 → 2, 2500 → 0, 0.00025 → 5), at most 12. */
  function decimalsFor(step) {
    if (!(step > 0) || !Number.isFinite(step)) return 2;
    for (let d = 0; d < 12; d++) {
      const scaled = step * 10 ** d;
      if (scaled >= 0.999999 && Math.abs(Math.round(scaled) - scaled) < 1e-6 * scaled) return d;
    }
    return 12;
  }

  /**
   * `v` with `digits` decimals, or with a k/M/G/T suffix from 10 000 on (decimals from `step`, the tick
   * spacing, when given); "0" for anything that is 0 up to rounding.
   */
  function fixed(v, digits, step, suffixFrom = 1e4) {
    if (!Number.isFinite(v)) return v > 0 ? "∞" : v < 0 ? "-∞" : "–";
    const a = Math.abs(v);
    for (const [size, unit] of UNITS)
      if (a >= Math.max(size, suffixFrom)) {
        const d = step ? decimalsFor(step / size) : Math.min(digits, 2);
        return `${trim((v / size).toFixed(Math.min(d, 3)))}${unit}`;
      }
    const s = trim(v.toFixed(Math.max(0, Math.min(digits, 12))));
    return s === "-0" ? "0" : s;
  }

  const SUPERSCRIPT = {
    "-": "⁻",
    0: "⁰",
    1: "¹",
    2: "²",
    3: "³",
    4: "⁴",
    5: "⁵",
    6: "⁶",
    7: "⁷",
    8: "⁸",
    9: "⁹",
  };

  /** "×10⁻⁶" for -6. */
  function power(exponent) {
    return `×10${String(exponent)
      .split("")
      .map((c) => SUPERSCRIPT[c])
      .join("")}`;
  }

  /**
   * Labels for one axis's tick values: values within a millionth of the tick spacing of 0 read "0" (float
   * noise such as -5.6e-17), every label has the decimals its value and the spacing need, and an axis whose
   * ticks are all below 0.001 shares one power of ten ("9.5×10⁻⁶").
   */
  function ticks(values) {
    const finite = values.filter((v) => Number.isFinite(v));
    let step = 0;
    for (let i = 1; i < finite.length; i++) {
      const d = Math.abs(finite[i] - finite[i - 1]);
      if (d > 0 && (step === 0 || d < step)) step = d;
    }
    const isZero = (v) => step > 0 && Math.abs(v) < step * 1e-6;
    const largest = Math.max(0, ...finite.filter((v) => !isZero(v)).map(Math.abs));
    if (largest > 0 && largest < 1e-3) {
      const exponent = Math.floor(Math.log10(largest));
      const scale = 10 ** exponent;
      const digits = Math.max(
        decimalsFor(step / scale),
        ...finite.map((v) => decimalsFor(Math.abs(v) / scale)),
      );
      return values.map((v) =>
        isZero(v) ? "0" : `${fixed(v / scale, Math.min(digits, 3))}${power(exponent)}`,
      );
    }
    const base = step > 0 ? decimalsFor(step) : 2;
    // One style per axis: once a tick reaches 10 000, every tick from 1000 on gets its suffix (5k, 10k, 15k).
    const suffixFrom = largest >= 1e4 ? 1e3 : 1e4;
    return values.map((v) => {
      if (!Number.isFinite(v)) return fixed(v, 0);
      if (isZero(v)) return "0";
      return fixed(v, Math.min(Math.max(base, decimalsFor(Math.abs(v))), base + 3), step, suffixFrom);
    });
  }

  /** One value for a legend: 4 significant digits, no exponent for everyday magnitudes. */
  function value(v) {
    if (v === null || v === undefined || Number.isNaN(v)) return "–";
    const a = Math.abs(v);
    if (a < 1e-12) return "0";
    if (a < 1e-4) {
      const exponent = Math.floor(Math.log10(a));
      return `${trim((v / 10 ** exponent).toFixed(2))}${power(exponent)}`;
    }
    const digits = a >= 1000 ? 0 : Math.max(0, 3 - Math.floor(Math.log10(a)));
    return fixed(v, digits);
  }

  /** A share in [0, 1] as a percentage. */
  function percent(v) {
    if (v === null || v === undefined || Number.isNaN(v)) return "–";
    return `${trim((v * 100).toFixed(Math.abs(v) < 0.1 ? 1 : 0))}%`;
  }

  globalThis.AirFormat = { ticks, value, percent, fixed };
})();
