#!/usr/bin/env bun
/**
 * Import circles in the workspace's production code (tests, test kits and fixtures excluded), as strongly
 * connected components of the import graph that packages/tests/src/circles.test.ts checks: relative and
 * `@air/<pkg>` imports (through the package's `exports`), static and dynamic. Prints each circle (runtime: at
 * least one edge of it is a value import; counting type-only: `import type` edges too).
 *   bun scripts/import-circles.ts [--runtime]
 */
import { join, relative, resolve } from "node:path";
import { importCircles, importGraph, isTestFile } from "../packages/tests/src/import-graph.ts";

const PACKAGES = resolve(import.meta.dir, "..", "packages");
const graph = importGraph(PACKAGES, (f) => !isTestFile(relative(PACKAGES, f)));
const show = (c: string[]) => `  ${c.map((f) => join("packages", f)).join(" ↔ ")}`;

const runtime = importCircles(graph, PACKAGES, true);
console.log(`runtime circles: ${runtime.length}`);
for (const c of runtime) console.log(show(c));
if (!process.argv.includes("--runtime")) {
  const all = importCircles(graph, PACKAGES, false);
  console.log(`circles counting type-only imports: ${all.length}`);
  for (const c of all) console.log(show(c));
}
