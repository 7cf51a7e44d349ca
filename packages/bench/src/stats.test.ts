import { describe, expect, test } from "bun:test";
import { fmt, fmtSpread, quantile, seededRandom, spread, spreadRow } from "./stats.ts";

describe("quantile", () => {
  test("interpolates between closest ranks", () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([10, 0, 5], 0)).toBe(0);
    expect(quantile([10, 0, 5], 1)).toBe(10);
    expect(quantile([0, 10], 0.95)).toBeCloseTo(9.5, 10);
  });
  test("does not reorder its input and handles edge cases", () => {
    const values = [3, 1, 2];
    expect(quantile(values, 0.5)).toBe(2);
    expect(values).toEqual([3, 1, 2]);
    expect(quantile([], 0.5)).toBeNaN();
    expect(() => quantile([1], 1.5)).toThrow(RangeError);
  });
});

describe("spread", () => {
  test("median, min, max and count", () => {
    expect(spread([5, 1, 9, 3])).toEqual({ median: 4, min: 1, max: 9, n: 4 });
    expect(spread([]).n).toBe(0);
  });
});

describe("formatting", () => {
  test("three significant digits, no noise on large values", () => {
    expect(fmt(1234.567)).toBe("1235");
    expect(fmt(0.012345)).toBe("0.0123");
    expect(fmt(2.5)).toBe("2.50");
    expect(fmt(0)).toBe("0");
    expect(fmt(16)).toBe("16");
    expect(fmt(1.5)).toBe("1.50");
    expect(fmt(Number.NaN)).toBe("NaN");
  });
  test("a spread shows min–max only with repeats", () => {
    expect(fmtSpread({ median: 2.5, min: 1.25, max: 3.5, n: 3 })).toBe("2.50 (1.25–3.50)");
    expect(fmtSpread({ median: 2, min: 1, max: 3, n: 3 })).toBe("2 (1–3)");
    expect(fmtSpread({ median: 2.5, min: 2.5, max: 2.5, n: 1 })).toBe("2.50");
  });
  test("a series' row: label, sample count, median (min–max)", () => {
    expect(spreadRow("warm ÷ cold", [0.03, 0.01, 0.02])).toEqual([
      "warm ÷ cold",
      "3",
      "0.0200 (0.0100–0.0300)",
    ]);
    expect(spreadRow("once", [4])).toEqual(["once", "1", "4"]);
  });
});

describe("seededRandom", () => {
  test("repeats per seed, differs between seeds, stays in [0, 1)", () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const c = seededRandom(8);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(c()).not.toBe(xs[0]);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
  });
});
