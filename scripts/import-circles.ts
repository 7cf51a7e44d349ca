#!/usr/bin/env bun
/**
 * Import circles in the workspace's production code (packages/* /src, tests excluded), as strongly connected
 * components of the import graph: relative imports, and `@air/<pkg>` resolved through the package's `exports`.
 * Prints each circle (runtime: at least one edge of it is a value import; type-only: all are `import type`).
 *   bun scripts/import-circles.ts [--runtime]
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const files: string[] = [];
function walk(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== "node_modules" && name !== "fixtures") walk(path);
    } else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !/^test-/.test(name)) files.push(path);
  }
}
for (const pkg of readdirSync(join(ROOT, "packages"))) {
  const src = join(ROOT, "packages", pkg, "src");
  if (existsSync(src)) walk(src);
}

function packageEntry(spec: string): string | undefined {
  const [scope, name, ...rest] = spec.split("/");
  if (scope !== "@air" || !name) return undefined;
  const dir = join(ROOT, "packages", name);
  const manifest = join(dir, "package.json");
  if (!existsSync(manifest)) return undefined;
  const exports = JSON.parse(readFileSync(manifest, "utf8")).exports ?? {};
  const target = exports[rest.length ? `./${rest.join("/")}` : "."];
  return typeof target === "string" ? resolve(dir, target) : undefined;
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?[^;]*?from\s+["']([^"']+)["']/gms;
/** file → imported file → true when some import of it is a value import. */
const edges = new Map<string, Map<string, boolean>>();
for (const file of files) {
  const out = new Map<string, boolean>();
  for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
    const spec = m[3] ?? "";
    const target = spec.startsWith(".") ? resolve(dirname(file), spec) : packageEntry(spec);
    if (!target || !files.includes(target)) continue;
    const names =
      /\{([^}]*)\}/
        .exec(m[0])?.[1]
        ?.split(",")
        .map((n) => n.trim())
        .filter(Boolean) ?? [];
    const typeOnly =
      Boolean(m[2]) ||
      (names.length > 0 &&
        names.every((n) => n.startsWith("type ")) &&
        !/\}\s*,|,\s*\{|^\s*import\s+\w+\s*,/.test(m[0]));
    Boolean(m[2]) || (/^\s*import\s*\{[^}]*\}/.test(m[0]) && /\{\s*(type\s+[^,}]+,?\s*)+\}/.test(m[0]));
    out.set(target, (out.get(target) ?? false) || !typeOnly);
  }
  edges.set(file, out);
}

/** Tarjan's strongly connected components over the edges `keep` admits. */
function components(keep: (runtime: boolean) => boolean): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const [w, runtime] of edges.get(v) ?? []) {
      if (!keep(runtime)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) ?? 0, idx.get(w) ?? 0));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      for (;;) {
        const w = stack.pop() as string;
        on.delete(w);
        scc.push(w);
        if (w === v) break;
      }
      if (scc.length > 1) out.push(scc.map((f) => relative(ROOT, f)).sort());
    }
  };
  for (const f of files) if (!idx.has(f)) visit(f);
  return out;
}

const runtime = components((r) => r);
const all = components(() => true);
console.log(`runtime circles: ${runtime.length}`);
for (const c of runtime) console.log(`  ${c.join(" ↔ ")}`);
if (!process.argv.includes("--runtime")) {
  console.log(`circles counting type-only imports: ${all.length}`);
  for (const c of all) console.log(`  ${c.join(" ↔ ")}`);
}
