import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { REPO_ROOT } from "@air/launcher/testing";

/**
 * The commands a user reads in README.md, docs/*.md and the comments of configs/*.toml, read at test time (so the
 * docs test follows the files as they change), and the paths they name: in the repository now, or written by a
 * run of one of the configs (its run dir, `<output_dir>/<run.name>` resolved from the TOML file).
 */
export interface DocCommand {
  /** Repo-relative file and 1-based line where the command starts. */
  where: string;
  /** The command as written (continuation lines joined). */
  text: string;
  /** Words after the program: `["rl", "configs/quickstart.toml", "--resume"]` for `bun run rl …`. */
  argv: string[];
  program: "bun run" | "bun test" | "script";
}

/** The files whose commands are checked. */
export function docFiles(): string[] {
  const configs = (dir: string): string[] =>
    readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? configs(join(dir, e.name)) : e.name.endsWith(".toml") ? [join(dir, e.name)] : [],
    );
  const docs = readdirSync(join(REPO_ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join("docs", f));
  return ["README.md", ...docs, ...configs("configs")];
}

const START = /(?:^|[\s`(])((?:bun run|bun test|scripts\/|bash )[^`#|;)]*)/g;

/** The text of a file a user reads as prose: a TOML file's comments only. */
function readable(file: string): string[] {
  const lines = readFileSync(join(REPO_ROOT, file), "utf8").split("\n");
  if (!file.endsWith(".toml")) return lines;
  return lines.map((l) => (l.trimStart().startsWith("#") ? l.trimStart().slice(1) : ""));
}

/**
 * Every command in the doc files: `bun run <script> …`, `bun test <path>`, `scripts/<x>` and `bash <file>`, cut
 * at a comment (`#`), a closing backtick or parenthesis, `&&` or `|`; a trailing `\` joins the next line.
 * @example documentedCommands().filter((c) => c.argv[0] === "rl")
 */
export function documentedCommands(files = docFiles()): DocCommand[] {
  const out: DocCommand[] = [];
  for (const file of files) {
    const lines = readable(file);
    for (let i = 0; i < lines.length; i++) {
      let line = lines[i]!;
      const start = i;
      while (line.trimEnd().endsWith("\\") && i + 1 < lines.length)
        line = `${line.trimEnd().slice(0, -1).trimEnd()} ${lines[++i]!.trim()}`;
      for (const match of line.matchAll(START)) {
        for (const piece of match[1]!.split("&&")) {
          const text = piece.trim().replace(/\s{2,}.*$/, "");
          const words = text.split(/\s+/).filter(Boolean);
          const program = text.startsWith("bun run")
            ? "bun run"
            : text.startsWith("bun test")
              ? "bun test"
              : "script";
          const argv = program === "script" ? words : words.slice(2);
          if (program !== "script" && argv.length === 0) continue;
          out.push({ where: `${file}:${start + 1}`, text, argv, program });
        }
      }
    }
  }
  return out;
}

/** A config's run dir as its TOML says (`[run] output_dir` relative to the file, default "outputs"; `name`, default "run"). */
export function runDirOf(configFile: string): string {
  const abs = resolve(REPO_ROOT, configFile);
  const run = (Bun.TOML.parse(readFileSync(abs, "utf8")) as { run?: { output_dir?: string; name?: string } })
    .run;
  return resolve(dirname(abs), run?.output_dir ?? "outputs", run?.name ?? "run");
}

/** Whether a word is a placeholder (`<run>`, `...`) rather than a path to check. */
export const isPlaceholder = (word: string) => /[<>]|\.\.\.|…|\*/.test(word);

/**
 * The paths a command names, resolved: its positional words that look like paths against the repository root
 * (commands run there), and the values of `--section.key value` options against the command's TOML file (as
 * the launcher resolves a config's paths).
 * @example commandPaths(cmd) // [{ word: "configs/quickstart.toml", path: "/…/configs/quickstart.toml" }]
 */
export function commandPaths(cmd: DocCommand): Array<{ word: string; path: string }> {
  const toml = cmd.argv.find((w) => w.endsWith(".toml"));
  const tomlDir = toml ? dirname(resolve(REPO_ROOT, toml)) : REPO_ROOT;
  const out: Array<{ word: string; path: string }> = [];
  cmd.argv.forEach((word, i) => {
    if (isPlaceholder(word) || !/[/.]/.test(word) || /^-|^https?:|^\d/.test(word) || word.includes("="))
      return;
    if (!/\//.test(word) && !/\.(toml|md|ts|json|yaml|jsonl)$/.test(word)) return;
    const option = cmd.argv[i - 1]?.startsWith("--") === true;
    out.push({ word, path: resolve(option ? tomlDir : REPO_ROOT, word) });
  });
  return out;
}

/**
 * The output paths the docs name inside a config's run dir, relative to it ("" for the run dir itself), with
 * the commands that name them: what a test's run of that config must leave behind.
 * @example documentedOutputs("configs/dataset/debug.toml") // [{ rel: "prime-rl/broadcasts/step_6", … }]
 */
export function documentedOutputs(configFile: string): Array<{ rel: string; cmd: DocCommand }> {
  const runDir = runDirOf(configFile);
  return documentedCommands().flatMap((cmd) =>
    commandPaths(cmd)
      .filter((p) => p.path === runDir || p.path.startsWith(`${runDir}/`))
      .map((p) => ({ rel: relative(runDir, p.path), cmd })),
  );
}

/** The configs whose runs write into the output dirs the docs name. */
export function configFiles(): string[] {
  return docFiles().filter((f) => f.endsWith(".toml"));
}

/** Whether a path lies in a config's run dir (an output, checked after that config's run, not now). */
export function isOutput(path: string): boolean {
  return configFiles().some((c) => {
    const runDir = runDirOf(c);
    return path === runDir || path.startsWith(`${runDir}/`);
  });
}

/** Whether a path is under an output dir of any config (`<output_dir>`), e.g. `outputs/<run>`. */
export function underOutputDir(path: string): boolean {
  return configFiles().some((c) => path.startsWith(`${dirname(runDirOf(c))}/`));
}

const SCRIPTS = Object.keys(
  (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> })
    .scripts,
);
const RL_SUBCOMMANDS = ["validate", "check", "clean"];

/**
 * What is wrong with a documented command without running anything: an unknown `bun run` script or `rl`
 * subcommand, a file or directory it names that does not exist, an output path no config's run writes.
 * @example problemsOf(cmd) // ['README.md:25: bun run rl configs/nope.toml: configs/nope.toml does not exist']
 */
export function problemsOf(cmd: DocCommand, benchmarks: string[]): string[] {
  const problems: string[] = [];
  const say = (what: string) => problems.push(`${cmd.where}: ${cmd.text}: ${what}`);
  if (cmd.program === "bun run") {
    const [script, sub] = cmd.argv;
    if (!SCRIPTS.includes(script!)) say(`no script "${script}" in package.json`);
    if (
      script === "rl" &&
      sub &&
      !isPlaceholder(sub) &&
      !sub.endsWith(".toml") &&
      !sub.startsWith("-") &&
      !RL_SUBCOMMANDS.includes(sub)
    )
      say(`rl has no subcommand "${sub}"`);
    if (script === "bench" && sub && !isPlaceholder(sub) && !sub.startsWith("-") && !benchmarks.includes(sub))
      say(`no benchmark "${sub}" (known: ${benchmarks.join(", ")})`);
  }
  if (cmd.program === "script") {
    const file = cmd.argv[0] === "bash" ? cmd.argv[1] : cmd.argv[0];
    if (file && !existsSync(resolve(REPO_ROOT, file))) say(`${file} does not exist`);
  }
  for (const { word, path } of commandPaths(cmd)) {
    if (isOutput(path)) continue;
    if (underOutputDir(path)) say(`${word} is in an output dir, but no config's run writes it`);
    else if (!existsSync(path)) say(`${word} does not exist (${relative(REPO_ROOT, path)})`);
  }
  return problems;
}

/**
 * The `rl validate` argv that checks a documented `bun run rl|eval <toml> …` command (its overrides kept,
 * `--resume` and the subcommand dropped), or undefined for a command without a config.
 * @example validateArgv(cmd) // ["validate", "configs/quickstart.toml"]
 */
export function validateArgv(cmd: DocCommand): string[] | undefined {
  const [script, ...rest] = cmd.argv;
  if (cmd.program !== "bun run" || (script !== "rl" && script !== "eval")) return undefined;
  const toml = rest.find((w) => w.endsWith(".toml"));
  if (!toml || isPlaceholder(toml)) return undefined;
  return ["validate", ...rest.filter((w) => w !== "--resume" && !RL_SUBCOMMANDS.includes(w))];
}
