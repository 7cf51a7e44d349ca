import type { AuditReport, Finding } from "./types.ts";

const SIGN: Record<Finding["verdict"], string> = {
  held: "held",
  broken: "BROKEN",
  ok: "ok",
  flagged: "FLAGGED",
  warn: "warn",
  "n/a": "n/a",
  error: "error",
};

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

const num = (x: number | undefined) =>
  x === undefined ? "" : Math.abs(x) >= 1000 ? x.toFixed(1) : Number(x.toPrecision(4)).toString();

/**
 * The audit as a console table (task, group, probe, verdict, score, evidence; critical rows marked `!!`) and a
 * summary line.
 * @example console.log(formatTable(report));
 */
export function formatTable(
  report: Pick<AuditReport, "findings" | "critical" | "tasks" | "repeats" | "runtime">,
): string {
  const rows = report.findings.map((f) => [
    f.critical ? "!!" : "",
    f.task,
    f.group,
    f.probe,
    SIGN[f.verdict],
    num(f.score),
    f.evidence,
  ]);
  const head = ["", "task", "group", "probe", "result", "score", "evidence"];
  const widths = head.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (i === 6 ? 0 : (r[i] as string).length))),
  );
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === 6 ? c : pad(c, widths[i] as number)))
      .join("  ")
      .trimEnd();
  const out = [line(head), line(widths.map((w, i) => "-".repeat(i === 6 ? 8 : w))), ...rows.map(line)];
  const byTask = report.tasks.map((t) => {
    const n = report.findings.filter((f) => f.task === t && f.critical).length;
    return `${t}: ${n === 0 ? "no critical finding" : `${n} critical`}`;
  });
  out.push(
    "",
    `audit of ${report.tasks.length} task(s), ${report.repeats} baseline repeat(s), runtime ${report.runtime}: ${byTask.join("; ")}`,
    report.critical > 0
      ? `${report.critical} critical finding(s) (!!): a leak or a forgeable score — fix the task before training on it`
      : "no critical finding",
  );
  return out.join("\n");
}
