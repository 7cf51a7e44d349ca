import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recordAudits } from "./audits.ts";
import { readAuditFindings } from "./findings.ts";
import { EVALUATION_NOISE_PROBE } from "./noise.ts";
import { openStore } from "./open.ts";

const dir = mkdtempSync(join(tmpdir(), "air-findings-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("findings: none without a store; each task's latest noise and critical findings; an unreadable store says why", () => {
  const file = join(dir, "air.db");
  expect(readAuditFindings(file)).toBeUndefined();
  const db = openStore(file);
  expect(readAuditFindings(file)).toEqual({ source: file, noise: {}, critical: [] });
  const row = { config: "c.toml", group: "baseline", verdict: "ok", critical: false, evidence: "e" };
  recordAudits(db, [
    { ...row, task: "a", probe: EVALUATION_NOISE_PROBE, score: 0.1, createdAt: 1 },
    {
      ...row,
      task: "b",
      probe: "sample submission",
      verdict: "flagged",
      critical: true,
      score: 1,
      createdAt: 1,
    },
  ]);
  // A newer audit of "a" replaces its older findings; "b" keeps its own.
  recordAudits(db, [
    { ...row, task: "a", probe: EVALUATION_NOISE_PROBE, score: 0.05, createdAt: 2 },
    { ...row, task: "a", probe: "write evaluate.py", verdict: "broken", critical: true, createdAt: 2 },
  ]);
  db.$client.close();
  expect(readAuditFindings(file)).toEqual({
    source: file,
    noise: { a: 0.05 },
    critical: [
      { task: "a", probe: "write evaluate.py", verdict: "broken", evidence: "e" },
      { task: "b", probe: "sample submission", verdict: "flagged", evidence: "e" },
    ],
  });
  const junk = join(dir, "junk.db");
  writeFileSync(junk, "not a database");
  const unreadable = readAuditFindings(junk);
  expect(unreadable).toMatchObject({ source: junk, noise: {}, critical: [] });
  expect(unreadable?.unreadable).toBeString();
});
