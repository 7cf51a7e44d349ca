import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readLatestAudits, recordAudits } from "./audits.ts";
import { openStore } from "./open.ts";

test("audits: stored per audit, the latest audit of each task read back, a store without audits reads []", () => {
  const dir = mkdtempSync(join(tmpdir(), "air-audits-"));
  try {
    const db = openStore(join(dir, "air.db"));
    expect(readLatestAudits(db)).toEqual([]);
    const row = {
      config: "c.toml",
      task: "t",
      probe: "sample submission",
      group: "trivial",
      verdict: "flagged",
      critical: true,
      score: 1,
      evidence: "1 ≥ 0.77",
      createdAt: 1,
    };
    recordAudits(db, [
      row,
      {
        ...row,
        task: "u",
        probe: "missing submission",
        verdict: "ok",
        critical: false,
        score: undefined,
        evidence: "no score",
      },
    ]);
    recordAudits(db, [{ ...row, verdict: "ok", critical: false, createdAt: 2 }]);
    const latest = readLatestAudits(db);
    expect(latest.map((r) => [r.task, r.verdict, r.critical, r.createdAt, r.score])).toEqual([
      ["t", "ok", false, 2, 1],
      ["u", "ok", false, 1, undefined],
    ]);
    db.$client.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
