import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { guardedCommand, IMPORT_GUARD, loadTask } from "@air/env-mlgym";
import { shellQuote } from "@air/sandbox";
import { fmt } from "../stats.ts";

const REPO = resolve(import.meta.dir, "../../../..");
const PYTHON = "/usr/bin/python3";

/** Game tasks timed plain and under the import guard: the audit's fixture, and MLGym's games with MLGYM_ROOT. */
function games(): { label: string; root: string; name: string }[] {
  const out = [
    {
      label: "leakyGame (fixture, 2000 calls)",
      root: join(REPO, "packages/audit/fixtures/mlgym"),
      name: "leakyGame",
    },
  ];
  const upstream = process.env.MLGYM_ROOT;
  if (upstream && existsSync(join(upstream, "configs/tasks/battleOfSexes.yaml")))
    for (const name of ["battleOfSexes", "prisonersDilemma", "blotto"])
      out.push({ label: `${name} (MLGym, 100000 calls)`, root: resolve(upstream), name });
  return out;
}

async function timed(command: string, cwd: string): Promise<{ s: number; stdout: string }> {
  const t0 = performance.now();
  const child = Bun.spawn(["bash", "-c", command], { cwd, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const kill = setTimeout(() => child.kill("SIGKILL"), 120_000);
  try {
    const [stdout, stderr, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ]);
    if (code !== 0) throw new Error(`${command.slice(0, 80)}… exited ${code}: ${stderr.slice(-400)}`);
    return { s: (performance.now() - t0) / 1000, stdout };
  } finally {
    clearTimeout(kill);
  }
}

/**
 * The import guard's source at git ref `ref` (`AIR_GUARD_BEFORE=main`), assembled as guard.ts assembles it, so a
 * run times the guard before and after a change side by side on the same machine at the same load.
 */
function guardAt(ref: string): string {
  const show = (file: string) =>
    execFileSync("git", ["show", `${ref}:packages/env-mlgym/src/guard/${file}`], {
      cwd: REPO,
      encoding: "utf8",
    });
  return [
    `PLAIN_SOURCE = ${JSON.stringify(show("plain.py"))}`,
    `HOST_SOURCE = ${JSON.stringify(show("host.py"))}`,
    show("import-guard.py"),
  ].join("\n");
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/**
 * Evaluation time of game tasks run plain (`python evaluate.py`, the agent's module in the evaluator's process)
 * and under air's import guard (the agent's module in a separate confined process, every call over a pipe),
 * alternated `repeats` times on the host (no sandbox: the guard's own cost), and with `AIR_GUARD_BEFORE=<git ref>`
 * the guard of that ref too, in the same rounds. Goal: at most 2× plain.
 * @example const { goals, rows } = await guardTimes(3);
 */
export async function guardTimes(
  repeats: number,
): Promise<{ goals: string[]; headers: string[]; rows: string[][] }> {
  const goals: string[] = [];
  const rows: string[][] = [];
  const beforeRef = process.env.AIR_GUARD_BEFORE;
  const before = beforeRef ? guardAt(beforeRef) : undefined;
  for (const game of games()) {
    const task = await loadTask(game.root, game.name);
    const dir = mkdtempSync(join(tmpdir(), "air-bench-guard-"));
    try {
      for (const s of task.starterCode)
        cpSync(s, join(dir, s.split("/").at(-1) as string), { recursive: true });
      for (const d of task.datasets) cpSync(d.dataPath, join(dir, "data"), { recursive: true });
      const script = task.evaluationPaths[0] as string;
      const plain: number[] = [];
      const guarded: number[] = [];
      const old: number[] = [];
      const command = guardedCommand(task, PYTHON, script, 60);
      for (let i = 0; i < repeats; i++) {
        plain.push((await timed(`${PYTHON} ${script}`, dir)).s);
        const g = await timed(command, dir);
        if (!g.stdout.includes("Score"))
          throw new Error(`guarded ${game.name} printed no score: ${g.stdout}`);
        guarded.push(g.s);
        if (before)
          old.push((await timed(command.replace(shellQuote(IMPORT_GUARD), shellQuote(before)), dir)).s);
      }
      const ratio = median(guarded) / median(plain);
      const oldCells = before ? [fmt(median(old)), `${fmt(median(old) / median(plain))}×`] : [];
      rows.push([
        game.label,
        fmt(median(plain)),
        fmt(median(guarded)),
        `${fmt(ratio)}×`,
        ...oldCells,
        String(repeats),
      ]);
      goals.push(
        `evaluation of ${game.label} under the import guard: **${fmt(ratio)}× plain** (${fmt(median(guarded))} s vs ${fmt(median(plain))} s) — goal ≤ 2×: ${ratio <= 2 ? "met" : "**not met**"}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const headers = ["game", "plain", "guarded", "ratio"]
    .concat(beforeRef ? [`guarded at ${beforeRef}`, `ratio at ${beforeRef}`] : [])
    .concat(["repeats"]);
  return { goals, headers, rows };
}
