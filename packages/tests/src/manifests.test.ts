import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { isTestFile } from "./import-graph.ts";

/**
 * The package graph is readable from the manifests: every `@air/x` a package names in its code is declared in
 * its package.json (`dependencies` when production code uses it, else `devDependencies`), every declared
 * `@air/x` is used, and production code never imports `@air/core/testing` (only tests, test helpers, the
 * bench and this package may).
 */
const PACKAGES = join(import.meta.dir, "..", "..");
/** A quoted `@air/x` or `@air/x/sub` specifier: import … from, import(…), or a loader's string. */
const SPECIFIER = /["'`](@air\/[a-z0-9-]+)(\/[^"'`]*)?["'`]/g;
/** Packages that exist to test or measure and may use the testing kit anywhere. */
const TEST_PACKAGES = new Set(["@air/tests", "@air/bench"]);

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === "node_modules" || name.startsWith(".")) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|js|mjs)$/.test(name) ? [path] : [];
  });
}

/** Every `@air/…` specifier in code lines (JSDoc and `//` comments skipped), with the subpath. */
export function airSpecifiers(text: string): Array<{ pkg: string; subpath: string }> {
  const out: Array<{ pkg: string; subpath: string }> = [];
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (t.startsWith("*") || t.startsWith("//") || t.startsWith("/*")) continue;
    for (const m of line.matchAll(SPECIFIER)) out.push({ pkg: m[1] ?? "", subpath: m[2] ?? "" });
  }
  return out;
}

function packageDirs(): string[] {
  return readdirSync(PACKAGES)
    .map((d) => join(PACKAGES, d))
    .filter((d) => {
      try {
        return statSync(join(d, "package.json")).isFile();
      } catch {
        return false;
      }
    });
}

describe("package manifests", () => {
  test("the scanner finds imports, dynamic imports and loader strings, and skips comments", () => {
    const found = airSpecifiers(
      [
        'import { a } from "@air/core";',
        'import { b } from "@air/core/testing";',
        'const m = await import("@air/logger-sqlite");',
        'delta: from("@air/reward-delta"),',
        ' * @example import x from "@air/viz";',
        '// import "@air/eval";',
      ].join("\n"),
    );
    expect(found).toEqual([
      { pkg: "@air/core", subpath: "" },
      { pkg: "@air/core", subpath: "/testing" },
      { pkg: "@air/logger-sqlite", subpath: "" },
      { pkg: "@air/reward-delta", subpath: "" },
    ]);
    expect(isTestFile(join("src", "a.test.ts"))).toBe(true);
    expect(isTestFile(join("src", "testing", "run.ts"))).toBe(true);
    expect(isTestFile(join("src", "plugin.ts"))).toBe(false);
  });

  test("@air/sandbox needs only @air/core; production code makes Docker clients only through it", () => {
    const sandbox = JSON.parse(readFileSync(join(PACKAGES, "sandbox", "package.json"), "utf8")) as Manifest;
    expect(Object.keys(sandbox.dependencies ?? {}).filter((d) => d.startsWith("@air/"))).toEqual([
      "@air/core",
    ]);
    // One factory (`dockerClient`, `dockerClientFor` in packages/sandbox/src/docker-client.ts); the bench may
    // make its own (it measures engines it starts), test code may too.
    const own: string[] = [];
    for (const dir of packageDirs()) {
      if (["sandbox", "bench"].includes(dir.split(sep).at(-1) ?? "")) continue;
      for (const file of sourceFiles(dir).filter((f) => !isTestFile(relative(dir, f)))) {
        const code = readFileSync(file, "utf8")
          .split("\n")
          .filter((l) => !/^\s*(\*|\/\/|\/\*)/.test(l));
        if (
          code.some((l) => /new Docker\(/.test(l)) &&
          !relative(PACKAGES, file).includes(`${sep}bench${sep}`)
        )
          own.push(relative(PACKAGES, file));
      }
    }
    expect(own).toEqual([]);
  });

  test("@air/viz's dashboard reads the store only through @air/logger-sqlite/read, and core only for types", () => {
    // Importing air-agent files and computing eval comparisons (AUP) are the `viz` command's job
    // (packages/viz/src/command/, the `@air/viz/command` entry); the dashboard only reads and draws.
    const dir = join(PACKAGES, "viz");
    const command = join(dir, "src", "command");
    const wrong: string[] = [];
    for (const file of sourceFiles(dir).filter(
      (f) => !isTestFile(relative(dir, f)) && !f.startsWith(command),
    )) {
      for (const line of readFileSync(file, "utf8").split("\n"))
        for (const { pkg, subpath } of airSpecifiers(line)) {
          const ok =
            (pkg === "@air/logger-sqlite" && subpath === "/read") ||
            (pkg === "@air/core" && /^\s*import type /.test(line));
          if (!ok) wrong.push(`${relative(PACKAGES, file)}: ${pkg}${subpath}`);
        }
    }
    expect(wrong).toEqual([]);
  });

  test("the launcher is the rl engine: launcher/src outside bin/ and the registry table imports only core and sandbox", () => {
    // App commands (viz, replay, eval, audit) are bin/ entry points; plugins, loggers and process kinds are
    // reached through builtins.ts (the only name → package table), lazily.
    const dir = join(PACKAGES, "launcher", "src");
    const wrong: string[] = [];
    for (const file of sourceFiles(dir)) {
      const rel = relative(dir, file);
      if (isTestFile(rel) || rel.startsWith(`bin${sep}`) || rel === "builtins.ts") continue;
      for (const { pkg, subpath } of airSpecifiers(readFileSync(file, "utf8")))
        if (pkg !== "@air/core" && pkg !== "@air/sandbox") wrong.push(`${rel}: ${pkg}${subpath}`);
    }
    expect(wrong).toEqual([]);
  });

  test("no plugin opens another plugin's store: only logger-sqlite, viz and the CLIs import @air/logger-sqlite", () => {
    // The audit's findings reach plugins as `ctx.audit` (the launcher reads the store once). Test code may
    // still build a store with @air/logger-sqlite/testing (a devDependency).
    const allowed = new Set([
      "logger-sqlite",
      "viz",
      "launcher",
      "eval",
      "audit",
      "replay",
      "bench",
      "tests",
    ]);
    const wrong: string[] = [];
    for (const dir of packageDirs()) {
      const name = dir.split(sep).at(-1) ?? "";
      if (allowed.has(name)) continue;
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
      if (manifest.dependencies?.["@air/logger-sqlite"]) wrong.push(`${name}/package.json`);
      for (const file of sourceFiles(dir).filter((f) => !isTestFile(relative(dir, f))))
        for (const { pkg, subpath } of airSpecifiers(readFileSync(file, "utf8")))
          if (pkg === "@air/logger-sqlite") wrong.push(`${relative(PACKAGES, file)}: ${pkg}${subpath}`);
    }
    expect(wrong).toEqual([]);
  });

  const dirs = packageDirs();
  const names = new Set(
    dirs.map((d) => (JSON.parse(readFileSync(join(d, "package.json"), "utf8")) as Manifest).name),
  );

  for (const dir of dirs) {
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
    test(`${manifest.name}: @air imports declared, declarations used, no testing kit in production code`, () => {
      const prod = new Set<string>();
      const dev = new Set<string>();
      const kitInProduction: string[] = [];
      // This file names packages in its own fixtures and constants.
      for (const file of sourceFiles(dir).filter((f) => f !== import.meta.path)) {
        const rel = relative(dir, file);
        const testCode = isTestFile(rel);
        for (const { pkg, subpath } of airSpecifiers(readFileSync(file, "utf8"))) {
          if (pkg === "@air/core" && subpath === "/testing" && !testCode && !TEST_PACKAGES.has(manifest.name))
            kitInProduction.push(rel);
          if (pkg === manifest.name) continue;
          (testCode ? dev : prod).add(pkg);
        }
      }
      const deps = Object.keys(manifest.dependencies ?? {}).filter((d) => d.startsWith("@air/"));
      const devDeps = Object.keys(manifest.devDependencies ?? {}).filter((d) => d.startsWith("@air/"));
      const declared = new Set([...deps, ...devDeps]);
      expect([...prod, ...dev].filter((p) => !declared.has(p))).toEqual([]);
      expect([...prod].filter((p) => !deps.includes(p))).toEqual([]);
      expect([...declared].filter((d) => !prod.has(d) && !dev.has(d))).toEqual([]);
      expect([...declared].filter((d) => !names.has(d))).toEqual([]);
      for (const d of [...deps, ...devDeps])
        expect(`${d}@${manifest.dependencies?.[d] ?? manifest.devDependencies?.[d]}`).toBe(
          `${d}@workspace:*`,
        );
      expect(kitInProduction).toEqual([]);
    });
  }
});
