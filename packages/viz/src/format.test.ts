import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

interface AirFormat {
  ticks(values: number[]): string[];
  value(v: number | null): string;
  percent(v: number | null): string;
}

/** The browser script, run here as the page runs it (it sets globalThis.AirFormat). */
function load(): AirFormat {
  new Function(readFileSync(join(import.meta.dir, "static", "format.js"), "utf8"))();
  return (globalThis as typeof globalThis & { AirFormat: AirFormat }).AirFormat;
}
const F = load();

test("axis ticks: float noise reads 0, decimals follow the spacing, no exponent", () => {
  expect(F.ticks([-0.1, -5.6e-17, 0.1, 0.2])).toEqual(["-0.1", "0", "0.1", "0.2"]);
  expect(F.ticks([0.30000000000000004, 0.4])).toEqual(["0.3", "0.4"]);
  expect(F.ticks([0.5, 1.5, 2.5])).toEqual(["0.5", "1.5", "2.5"]);
  expect(F.ticks([0, 0.25, 0.5])).toEqual(["0", "0.25", "0.5"]);
  expect(F.ticks([1, 2, 3])).toEqual(["1", "2", "3"]);
});

test("axis ticks: large values get k/M, tiny ones one shared power of ten", () => {
  expect(F.ticks([0, 2500, 5000, 7500, 10000, 12500])).toEqual(["0", "2.5k", "5k", "7.5k", "10k", "12.5k"]);
  expect(F.ticks([0, 2e6, 4e6])).toEqual(["0", "2M", "4M"]);
  expect(F.ticks([5000, 10000, 15000])).toEqual(["5k", "10k", "15k"]);
  expect(F.ticks([0, 500, 1000, 1500])).toEqual(["0", "500", "1000", "1500"]);
  expect(F.ticks([2e-6, 4e-6])).toEqual(["2×10⁻⁶", "4×10⁻⁶"]);
  expect(F.ticks([9e-6, 1e-5, 1.1e-5])).toEqual(["0.9×10⁻⁵", "1×10⁻⁵", "1.1×10⁻⁵"]);
  for (const label of [...F.ticks([-1e-17, 0, 1e-17]), ...F.ticks([1e-9, 2e-9])])
    expect(label).not.toMatch(/e-/);
});

test("legend values and shares", () => {
  expect(F.value(-5.6e-17)).toBe("0");
  expect(F.value(0.123456)).toBe("0.1235");
  expect(F.value(123456)).toBe("123k");
  expect(F.value(3e-6)).toBe("3×10⁻⁶");
  expect(F.value(null)).toBe("–");
  expect(F.percent(0.25)).toBe("25%");
  expect(F.percent(0.025)).toBe("2.5%");
});
