import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * docs/ARCHITECTURE.md's package graph is the code's: its "## Package graph" section opens with one indented line
 * per package, `name ──▶ dep, dep` (the `@air/` packages of its package.json `dependencies`, without the scope;
 * `(none)` for none), and those lines must be exactly the graph the manifests give.
 */
const ROOT = join(import.meta.dir, "..", "..", "..");
const HEADING = "## Package graph";

/** Each package under packages/ → its `@air/` dependencies, sorted, without the scope. */
export function manifestGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const dir of readdirSync(join(root, "packages")).sort()) {
    const path = join(root, "packages", dir, "package.json");
    if (!existsSync(path)) continue;
    const m = JSON.parse(readFileSync(path, "utf8")) as {
      name: string;
      dependencies?: Record<string, string>;
    };
    const deps = Object.keys(m.dependencies ?? {})
      .filter((d) => d.startsWith("@air/"))
      .map((d) => d.slice("@air/".length))
      .sort();
    graph.set(m.name.replace(/^@air\//, ""), deps);
  }
  return graph;
}

/**
 * The graph the doc's section draws: the indented lines right after the heading (a blank line, then lines up to
 * the next blank line), each `name ──▶ deps`; a line of another shape is returned as a problem.
 */
export function documentedGraph(markdown: string): { graph: Map<string, string[]>; problems: string[] } {
  const lines = markdown.split("\n");
  const at = lines.findIndex((l) => l.startsWith(HEADING));
  const graph = new Map<string, string[]>();
  const problems: string[] = [];
  if (at < 0) return { graph, problems: [`no "${HEADING}" section`] };
  let i = at + 1;
  while (lines[i]?.trim() === "") i++;
  for (; i < lines.length && (lines[i] ?? "").trim() !== ""; i++) {
    const m = /^ {4}([a-z0-9-]+) ──▶ (.+)$/.exec(lines[i] ?? "");
    if (!m) {
      problems.push(`line ${i + 1}: not "    name ──▶ deps": ${lines[i]}`);
      continue;
    }
    const deps = m[2] === "(none)" ? [] : (m[2] as string).split(",").map((d) => d.trim());
    if (graph.has(m[1] as string)) problems.push(`line ${i + 1}: ${m[1]} drawn twice`);
    graph.set(m[1] as string, [...deps].sort());
  }
  return { graph, problems };
}

test("docs/ARCHITECTURE.md's package graph is the one the package.json dependencies give", () => {
  const { graph, problems } = documentedGraph(readFileSync(join(ROOT, "docs", "ARCHITECTURE.md"), "utf8"));
  expect(problems).toEqual([]);
  expect(Object.fromEntries(graph)).toEqual(Object.fromEntries(manifestGraph(ROOT)));
});

test("a drawn graph that disagrees with the manifests is seen: a missing edge, an extra package, a bad line", () => {
  const doc = (...rows: string[]) =>
    `# x\n\n${HEADING}\n\n${rows.map((r) => `    ${r}`).join("\n")}\n\nprose\n`;
  const ok = documentedGraph(doc("core ──▶ (none)", "sandbox ──▶ core"));
  expect(Object.fromEntries(ok.graph)).toEqual({ core: [], sandbox: ["core"] });
  expect(documentedGraph(doc("sandbox ──▶ core, eval")).graph.get("sandbox")).toEqual(["core", "eval"]);
  expect(documentedGraph(doc("core ◀── sandbox")).problems).toHaveLength(1);
  expect(documentedGraph(doc("core ──▶ (none)", "core ──▶ x")).problems).toHaveLength(1);
  const real = manifestGraph(ROOT);
  expect(real.get("core")).toEqual([]);
  expect(real.get("launcher")).toContain("core");
});
