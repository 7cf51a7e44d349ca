import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";

/** A table: header cells and rows of cells (already formatted). */
export interface Table {
  title?: string;
  headers: string[];
  rows: string[][];
}

/** What one benchmark reports: tables, the goals with verdicts, and notes on what limits the figures. */
export interface BenchReport {
  /** Short name, as in `bun run bench <name>`. */
  name: string;
  title: string;
  command: string;
  tables: Table[];
  /** One line per goal: figure, goal, verdict. */
  goals: string[];
  /** Free text (markdown): profile, what limits it, what would close the gap. */
  notes: string[];
  /** Extra machine facts (e.g. the docker version). */
  machineExtra?: string[];
}

/**
 * Markdown for a table.
 * @example renderTable({ headers: ["a"], rows: [["1"]] }) // "| a |\n|---|\n| 1 |"
 */
export function renderTable(table: Table): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const out = [line(table.headers), line(table.headers.map(() => "---")), ...table.rows.map(line)];
  return (table.title ? [`**${table.title}**`, "", ...out] : out).join("\n");
}

/**
 * One line describing this machine: cores, CPU model, memory, bun version, load at the start.
 * @example machineDescription() // "2 cores (…), 23.5 GiB RAM, bun 1.4.5, linux x64, load 1.2"
 */
export function machineDescription(): string {
  const list = cpus();
  const model = list[0]?.model?.trim() ?? "unknown CPU";
  const memGiB = (totalmem() / 2 ** 30).toFixed(1);
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");
  return (
    `${list.length} cores (${model}), ${memGiB} GiB RAM, bun ${Bun.version}, ${process.platform} ${process.arch}, ` +
    `load average at start ${load} (1/5/15 min; the machine is shared with other work)`
  );
}

/**
 * The markdown section of one benchmark, between markers so `--write` can replace it in place.
 * @example renderSection(report, machineDescription(), new Date())
 */
export function renderSection(report: BenchReport, machine: string, when: Date): string {
  const parts = [
    `<!-- bench:${report.name}:start -->`,
    `## ${report.title}`,
    "",
    `Command: \`${report.command}\` — run ${when.toISOString().slice(0, 16).replace("T", " ")} UTC`,
    "",
    `Machine: ${machine}${report.machineExtra?.length ? `; ${report.machineExtra.join("; ")}` : ""}`,
    "",
    "Goals:",
    "",
    ...report.goals.map((g) => `- ${g}`),
    "",
    ...report.tables.flatMap((t) => [renderTable(t), ""]),
    ...report.notes.flatMap((n) => [n, ""]),
    `<!-- bench:${report.name}:end -->`,
  ];
  return parts.join("\n");
}

/** Section names in the order BENCHMARKS.md lists them, with their titles. */
export const SECTIONS: Array<{ name: string; title: string }> = [
  { name: "pipeline", title: "1. Pipeline efficiency" },
  { name: "async", title: "2. Async vs synchronous" },
  { name: "containers", title: "3. Containers (real dockerd)" },
  { name: "local", title: "4. Local runtime" },
  { name: "store", title: "5. Store and dashboard" },
  { name: "quickstart", title: "6. Quickstart" },
  { name: "faults", title: "7. Faults" },
  { name: "tree", title: "8. Tree rollouts" },
  { name: "tree-harbor", title: "8b. Tree rollouts on a Harbor task" },
  { name: "audit", title: "9. Task audit" },
  { name: "hosts", title: "10. Docker hosts" },
  { name: "scale", title: "12. Internet scale, simulated" },
  { name: "scale-store", title: "13. Store and dashboard at scale" },
  { name: "sandbox", title: "14. Sandboxes: validate and fork vs the task's data size" },
  { name: "resume", title: "16. Durable rollouts: work lost per crash, snapshot cost per turn" },
];

const HEADER = [
  "# Benchmarks",
  "",
  "How close the orchestrator, the container runtime and the store come to their limits. Each section is",
  "written by `bun run bench <name> --write` and holds the exact command, the machine, and the goal next to each",
  "figure. Figures are ratios or paired measurements taken side by side in one run (the machine is shared and",
  "noisy); repeated figures are medians with (min–max). Sources: `packages/bench`.",
  "",
].join("\n");

function placeholder(name: string, title: string): string {
  return [
    `<!-- bench:${name}:start -->`,
    `## ${title}`,
    "",
    "Not measured yet.",
    `<!-- bench:${name}:end -->`,
  ].join("\n");
}

const SUMMARY = /<!-- bench:summary:start -->[\s\S]*?<!-- bench:summary:end -->\n*/;

function markedSection(name: string): RegExp {
  return new RegExp(`<!-- bench:${name}:start -->[\\s\\S]*?<!-- bench:${name}:end -->`);
}

/**
 * Replaces (or inserts, in section order) one section of a BENCHMARKS.md text and rebuilds the summary; every
 * other byte stays as it is, hand-written sections (no markers) included.
 * @example updateSections(existingText, "pipeline", sectionMarkdown)
 */
export function updateSections(text: string | undefined, name: string, section: string): string {
  if (!SECTIONS.some((s) => s.name === name)) throw new Error(`unknown benchmark section "${name}"`);
  let current =
    text && text.trim() !== ""
      ? text
      : `${HEADER}\n${SECTIONS.map((s) => placeholder(s.name, s.title)).join("\n\n")}\n`;
  const re = markedSection(name);
  if (re.test(current)) current = current.replace(re, () => section);
  else {
    const later = SECTIONS.slice(SECTIONS.findIndex((s) => s.name === name) + 1)
      .map((s) => current.indexOf(`<!-- bench:${s.name}:start -->`))
      .find((i) => i >= 0);
    current =
      later === undefined
        ? `${current.trimEnd()}\n\n${section}\n`
        : `${current.slice(0, later)}${section}\n\n${current.slice(later)}`;
  }
  current = current.replace(SUMMARY, "");
  const first = current.search(/<!-- bench:|^## /m);
  const head = (first === -1 ? current : current.slice(0, first)).trimEnd();
  const body = first === -1 ? "" : current.slice(first);
  return `${head}\n\n${summary(body)}\n\n${body.trimEnd()}\n`;
}

/** The goal lines of every `## ` section of `body` (written by a bench or by hand), in document order. */
function summary(body: string): string {
  const lines = body
    .split(/^(?=## )/m)
    .filter((text) => text.startsWith("## "))
    .flatMap((text) => {
      const title = /^## (.+)$/m.exec(text)?.[1] ?? "?";
      const goals = /Goals:\n\n((?:- .*\n?)+)/.exec(text)?.[1];
      const list = goals ? goals.trim().split("\n") : ["- not measured yet"];
      return list.map((g) => `| ${title} | ${g.slice(2)} |`);
    });
  return [
    "<!-- bench:summary:start -->",
    "## Summary (latest figure next to each goal; details in the sections below)",
    "",
    "| benchmark | goal: figure — verdict |",
    "| --- | --- |",
    ...lines,
    "<!-- bench:summary:end -->",
  ].join("\n");
}

/**
 * Prints a report's tables and goals; with `write`, updates its section of `file`.
 * @example publish(report, { write: true, file: "BENCHMARKS.md" })
 */
export function publish(
  report: BenchReport,
  options: { write: boolean; file: string; machine: string },
): void {
  const section = renderSection(report, options.machine, new Date());
  console.log(
    section
      .split("\n")
      .filter((l) => !l.startsWith("<!--"))
      .join("\n"),
  );
  if (!options.write) return;
  const existing = existsSync(options.file) ? readFileSync(options.file, "utf8") : undefined;
  writeFileSync(options.file, updateSections(existing, report.name, section));
  console.log(`\nupdated section "${report.name}" of ${options.file}`);
}
