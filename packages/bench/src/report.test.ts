import { describe, expect, test } from "bun:test";
import { type BenchReport, renderSection, renderTable, updateSections } from "./report.ts";

const report: BenchReport = {
  name: "local",
  title: "4. Local runtime",
  command: "bun run bench local --write",
  tables: [{ headers: ["a", "b"], rows: [["1", "2"]] }],
  goals: ["p50 ≤ 3 ms: **0.2 ms** — met"],
  notes: ["a note"],
};

describe("report", () => {
  test("renders a markdown table", () => {
    expect(renderTable({ headers: ["a", "b"], rows: [["1", "2"]] })).toBe(
      "| a | b |\n| --- | --- |\n| 1 | 2 |",
    );
  });

  test("a section carries the command, the machine, goals, tables and notes between markers", () => {
    const text = renderSection(report, "2 cores", new Date("2026-01-02T03:04:00Z"));
    expect(text.startsWith("<!-- bench:local:start -->")).toBe(true);
    expect(text.endsWith("<!-- bench:local:end -->")).toBe(true);
    for (const part of [
      "`bun run bench local --write`",
      "2026-01-02 03:04 UTC",
      "Machine: 2 cores",
      "- p50",
      "| 1 | 2 |",
      "a note",
    ])
      expect(text).toContain(part);
  });

  test("updating one section keeps the others and the order; placeholders for the rest", () => {
    const first = updateSections(undefined, "local", renderSection(report, "m1", new Date()));
    expect(first).toContain("## 1. Pipeline efficiency\n\nNot measured yet.");
    expect(first.indexOf("bench:pipeline:start")).toBeLessThan(first.indexOf("bench:local:start"));
    expect(first).toContain("Machine: m1");
    const other = { ...report, name: "store", title: "5. Store and dashboard" };
    const second = updateSections(first, "store", renderSection(other, "m2", new Date()));
    expect(second).toContain("Machine: m1");
    expect(second).toContain("Machine: m2");
    const third = updateSections(second, "local", renderSection(report, "m3", new Date()));
    expect(third).not.toContain("Machine: m1");
    expect(third.match(/bench:local:start/g)?.length).toBe(1);
    expect(() => updateSections(third, "nope", "x")).toThrow(/unknown benchmark section/);
    expect(third.match(/bench:summary:start/g)?.length).toBe(1);
    expect(third).toContain("| 4. Local runtime | p50 ≤ 3 ms: **0.2 ms** — met |");
    expect(third).toContain("| 1. Pipeline efficiency | not measured yet |");
  });

  test("a hand-written section and the text around sections survive a write, and their goals are summarised", () => {
    const first = updateSections(undefined, "local", renderSection(report, "m1", new Date()));
    const hand =
      "## 15. Setup by hand\n\nGoals:\n\n- setup < 5 min: **260 s** — met\n\nA note kept as it is.\n";
    const withHand = `${first.trimEnd()}\n\n${hand}`;
    const next = updateSections(withHand, "local", renderSection(report, "m2", new Date()));
    expect(next).toContain(hand);
    expect(next).toContain("Machine: m2");
    expect(next).toContain("| 15. Setup by hand | setup < 5 min: **260 s** — met |");
    expect(next.match(/bench:summary:start/g)?.length).toBe(1);
    expect(updateSections(next, "local", renderSection(report, "m2", new Date()))).toBe(next);
  });
});
