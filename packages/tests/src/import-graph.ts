import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** One import of a file: the file it names, and whether only types cross (`import type`, `export type`). */
export interface ImportEdge {
  to: string;
  typeOnly: boolean;
}

/** Test code: `*.test.ts`, anything under `test/`, `testing/` or `fixtures/`, and `test-*.ts` helpers. */
export function isTestFile(path: string): boolean {
  const parts = path.split(sep);
  const base = parts.at(-1) ?? "";
  return (
    /\.test\.[jt]sx?$/.test(base) ||
    base.startsWith("test-") ||
    parts.some((p) => p === "test" || p === "testing" || p === "fixtures")
  );
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?(?:[^"'`;]*?\s+from\s+)?["']([^"']+)["']/gm;
const DYNAMIC = /import\(\s*["']([^"']+)["']\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === "node_modules" || name.startsWith(".")) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** `@air/x[/sub]` → the file its package.json `exports` names. */
function airResolver(packagesDir: string): (specifier: string) => string | undefined {
  const exportsOf = new Map<string, { dir: string; exports: Record<string, string> }>();
  for (const d of readdirSync(packagesDir)) {
    const manifest = join(packagesDir, d, "package.json");
    if (!existsSync(manifest)) continue;
    const m = JSON.parse(readFileSync(manifest, "utf8")) as {
      name: string;
      exports?: Record<string, string>;
    };
    exportsOf.set(m.name, { dir: join(packagesDir, d), exports: m.exports ?? {} });
  }
  return (specifier) => {
    const [scope, name, ...rest] = specifier.split("/");
    const pkg = exportsOf.get(`${scope}/${name}`);
    const target = pkg?.exports[rest.length > 0 ? `./${rest.join("/")}` : "."];
    return pkg && target ? resolve(pkg.dir, target) : undefined;
  };
}

/**
 * The import graph of every TypeScript file under `packagesDir` (relative and `@air/…` imports, static and
 * dynamic; JSDoc and `//` comment lines are skipped, so an `@example` import is not an edge).
 * @example importGraph("packages").get("/…/core/src/host.ts") // [{ to: "/…/core/src/errors.ts", typeOnly: false }, …]
 */
export function importGraph(
  packagesDir: string,
  include: (file: string) => boolean,
): Map<string, ImportEdge[]> {
  const air = airResolver(packagesDir);
  const graph = new Map<string, ImportEdge[]>();
  for (const file of sourceFiles(packagesDir).filter(include)) {
    const text = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
      .join("\n");
    const edges: ImportEdge[] = [];
    const add = (specifier: string, typeOnly: boolean) => {
      const to = specifier.startsWith(".")
        ? resolve(dirname(file), specifier)
        : specifier.startsWith("@air/")
          ? air(specifier)
          : undefined;
      if (to && include(to) && existsSync(to)) edges.push({ to, typeOnly });
    };
    for (const m of text.matchAll(IMPORT)) {
      const clause = m[0];
      // `import { type A, type B } from` carries only types too.
      const braces = /\{([^}]*)\}/.exec(clause)?.[1];
      const allTypes =
        braces !== undefined &&
        !/^\s*(import|export)\s+[\w*]/.test(clause.replace(/^\s*(import|export)\s+(type\s+)?\{/, "")) &&
        braces
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean)
          .every((x) => x.startsWith("type "));
      add(m[3] ?? "", Boolean(m[2]) || allTypes);
    }
    for (const m of text.matchAll(DYNAMIC)) add(m[1] ?? "", false);
    graph.set(file, edges);
  }
  return graph;
}

/**
 * The circles of a graph: its strongly connected components of more than one file (Tarjan), each sorted, as
 * paths relative to `base`; with `runtimeOnly`, type-only edges are left out (they vanish when compiled).
 * @example importCircles(graph, "packages", true) // [["launcher/src/plugin-needs.ts", "launcher/src/trainer-restart.ts"]]
 */
export function importCircles(
  graph: Map<string, ImportEdge[]>,
  base: string,
  runtimeOnly: boolean,
): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const { to, typeOnly } of graph.get(v) ?? []) {
      if (runtimeOnly && typeOnly) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.map((f) => relative(base, f).split(sep).join("/")).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out.sort((a, b) => (a[0] ?? "").localeCompare(b[0] ?? ""));
}
