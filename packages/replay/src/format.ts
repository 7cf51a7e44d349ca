import type { ReplayReport } from "./replay.ts";

const num = (x: number | null | undefined) =>
  x === null || x === undefined ? "—" : Number(x.toPrecision(6)).toString();

/**
 * The replay report as `bun run replay` prints it: the stored vs replayed final scores, their spread, and per
 * replay where its observations first differ from the stored ones.
 * @example process.stdout.write(formatReplay(report));
 */
export function formatReplay(r: ReplayReport): string {
  const d = r.distribution;
  const lines = [
    `replay of ${r.rolloutId} (task ${r.task}, example ${r.exampleId}, ${r.commands.length} turns) from ${r.runDir}`,
    `metric ${r.priorityMetric ?? "(none)"}: stored final score ${num(r.stored.finalScore)}`,
    `replayed ${r.runs.length}×: mean ${num(d.mean)} ± ${num(d.std)} (min ${num(d.min)}, max ${num(d.max)}, ${d.n} scored)`,
    `reproduced the stored score: ${r.reproduced}/${r.runs.length}; identical observations: ${r.identical}/${r.runs.length}`,
  ];
  if (r.parseErrorTurns.length > 0)
    lines.push(
      `turns ${r.parseErrorTurns.join(", ")} had a parse error when stored: replayed as the same reply and parse error`,
    );
  for (const run of r.runs) {
    const head = `  #${run.index + 1}: final ${num(run.finalScore)} (${run.stopReason})`;
    if (run.error) lines.push(`${head}, error: ${run.error}`);
    else if (!run.divergence) lines.push(`${head}, observations identical`);
    else {
      const v = run.divergence;
      lines.push(
        `${head}, first diverges at turn ${v.turn} (\`${r.commands[v.turn] ?? "submit"}\`), line ${v.line}:`,
        `      stored:   ${v.stored}`,
        `      replayed: ${v.replayed}`,
      );
    }
  }
  lines.push(`report: ${r.replayDir}/replay.json`);
  return `${lines.join("\n")}\n`;
}
