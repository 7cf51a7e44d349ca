import { expect, test } from "bun:test";
import { parseExports, readExports } from "./shell-exports.ts";
import type { Sandbox } from "./types.ts";

/** `export -p` of a real bash (this machine's, 5.2) after `setup`. */
function exportP(setup: string): string {
  const out = Bun.spawnSync(["bash", "--norc", "-c", `${setup}; builtin export -p`], {
    env: { PATH: "/usr/bin:/bin" },
  });
  expect(out.exitCode).toBe(0);
  return out.stdout.toString();
}

const ODD = "a \"b\" \\c $HOME `id` $(id) 'q'\nnext\tline \u0001 é ü 漢";

test("parseExports reads back what bash printed: both quotings, control characters, UTF-8 in the C locale, bare names", () => {
  const bare = parseExports(exportP("export BARE EMPTY="));
  expect([bare.has("BARE"), bare.get("BARE"), bare.get("EMPTY")]).toEqual([true, undefined, ""]);
  const spawned = (lang: string) =>
    Bun.spawnSync(["bash", "--norc", "-c", 'export ODD="$0"; builtin export -p', ODD], {
      env: { PATH: "/usr/bin:/bin", LANG: lang, LC_ALL: lang },
    }).stdout.toString();
  for (const lang of ["C", "C.UTF-8"]) {
    const text = spawned(lang);
    expect(text).toContain("declare -x ODD=$'"); // bash 5.2: ANSI-C quoting for control characters
    expect(parseExports(text).get("ODD")).toBe(ODD);
  }
  // bash ≤ 5.1 (older task images) double-quotes every value, newlines as they are
  const old = 'declare -x A="1 \\"2\\" \\\\ \\$x \\`y\\`\nz"\ndeclare -x B="plain"\n';
  expect([...parseExports(old)]).toEqual([
    ["A", '1 "2" \\ $x `y`\nz'],
    ["B", "plain"],
  ]);
});

test("parseExports leaves out read-only variables and those a shell sets itself; never a line that is not bash's", () => {
  const text = exportP("export KEEP=1; declare -rx FIXED=2; cd /tmp; cd /");
  const names = [...parseExports(text).keys()];
  expect(names).toContain("KEEP");
  for (const own of ["FIXED", "PWD", "OLDPWD", "SHLVL", "_"]) expect(names).not.toContain(own);
  expect([
    ...parseExports('echo hi\ndeclare -x ok="1"\nx declare -x no="2"\ndeclare -x bad-name="3"\n'),
  ]).toEqual([["ok", "1"]]);
});

test("readExports carries nothing rather than part: an output the shell cut, a failed or timed-out read", async () => {
  const answering = (output: string, exitCode = 0, timedOut = false): Sandbox => ({
    id: "fake",
    workspace: "/",
    exec: async () => ({ output, exitCode, timedOut, cwd: "/" }),
    evaluate: async () => ({ stdout: "", stderr: "", exitCode: 0, timedOut: false }),
    snapshot: async () => new Uint8Array(),
    alive: async () => true,
  });
  expect(await readExports(answering('declare -x A="1"\n'))).toBe('declare -x A="1"\n');
  const cut = 'declare -x A="1"\n[... 123 characters dropped ...]\ndeclare -x Z="2"\n';
  expect(await readExports(answering(cut))).toBeUndefined();
  expect(await readExports(answering("", 1))).toBeUndefined();
  expect(await readExports(answering("", 0, true))).toBeUndefined();
});
