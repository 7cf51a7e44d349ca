import { describe, expect, test } from "bun:test";
import { join, relative } from "node:path";
import { importCircles, importGraph, isTestFile } from "./import-graph.ts";

const PACKAGES = join(import.meta.dir, "..", "..");

/**
 * Import circles in production code that are left to remove (issue 35 §5: 0 circles, runtime or type-only): none.
 * The list is exact: a new circle fails.
 */
const KNOWN: string[] = [];

describe("import circles", () => {
  test("the scanner: relative and @air imports, static and dynamic; type-only edges kept apart; comments skipped", () => {
    const edge = (to: string, typeOnly = false) => ({ to, typeOnly });
    const graph = new Map([
      ["/p/a.ts", [edge("/p/b.ts")]],
      ["/p/b.ts", [edge("/p/a.ts")]],
      ["/p/c.ts", [edge("/p/d.ts", true)]],
      ["/p/d.ts", [edge("/p/c.ts")]],
      ["/p/e.ts", [edge("/p/a.ts")]],
    ]);
    expect(importCircles(graph, "/p", true)).toEqual([["a.ts", "b.ts"]]);
    expect(importCircles(graph, "/p", false)).toEqual([
      ["a.ts", "b.ts"],
      ["c.ts", "d.ts"],
    ]);
    // On this repository: core's host imports its errors module; registry.ts's JSDoc `import("@air/reward-delta")`
    // is no edge.
    const real = importGraph(
      PACKAGES,
      (f) => f.includes(join("core", "src")) && !isTestFile(relative(PACKAGES, f)),
    );
    const host = real.get(join(PACKAGES, "core", "src", "host.ts")) ?? [];
    expect(host.map((e) => relative(PACKAGES, e.to))).toContain(join("core", "src", "errors.ts"));
    expect(
      (real.get(join(PACKAGES, "core", "src", "registry.ts")) ?? []).some((e) =>
        e.to.includes("reward-delta"),
      ),
    ).toBe(false);
  });

  test("production code has no import circle but the known ones (runtime or type-only)", () => {
    const graph = importGraph(
      PACKAGES,
      (f) => !f.includes("node_modules") && !isTestFile(relative(PACKAGES, f)),
    );
    const circles = importCircles(graph, PACKAGES, false).map((c) => c.join(" ↔ "));
    expect(circles.sort()).toEqual([...KNOWN].sort());
  });
});
