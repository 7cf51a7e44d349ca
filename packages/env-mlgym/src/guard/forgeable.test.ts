import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { AuditFindings } from "@air/core";
import { loadTask } from "../task.ts";
import { forgeChecks, proxyProblem } from "./forgeable.ts";
import { guarded } from "./guard.ts";

const FIXTURES = join(import.meta.dir, "..", "..", "fixtures");

describe("forgeable tasks", () => {
  test("a game that imports a class from the agent's module cannot be proxied: check fails unless allowed", async () => {
    const task = await loadTask(join(FIXTURES, "class-game"), "classGame");
    expect(proxyProblem(task)).toContain("evaluate.py imports strategy.Player, a class");
    expect(guarded(task)).toBe(false);
    const [refused] = forgeChecks([{ name: "classGame", task }], []);
    expect(refused).toMatchObject({ status: "fail", name: "task classGame: reward integrity" });
    expect(refused?.message).toContain("env.allow_forgeable");
    expect(forgeChecks([{ name: "classGame", task }], ["classGame"])[0]?.status).toBe("ok");
  });

  test("a game whose functions cross is proxied and passes", async () => {
    const task = await loadTask(join(FIXTURES, "known-game"), "prisonersDilemma");
    expect(proxyProblem(task)).toBeUndefined();
    expect(guarded(task)).toBe(true);
    expect(forgeChecks([{ name: "prisonersDilemma", task }], [])[0]?.status).toBe("ok");
  });

  test("a critical finding of the latest audit (ctx.audit) refuses the task unless allowed", async () => {
    const task = await loadTask(join(FIXTURES, "known-game"), "prisonersDilemma");
    const check = (audit?: AuditFindings, allow: string[] = [], name = "prisonersDilemma") =>
      forgeChecks([{ name, task }], allow, audit);
    expect(check()[0]?.status).toBe("ok");
    const clean: AuditFindings = { source: "/runs/x/air.db", noise: {}, critical: [] };
    expect(check(clean)[0]?.status).toBe("ok");
    // Another task's finding does not touch this one.
    const other = { task: "blotto", probe: "early exit at import", verdict: "broken", evidence: "x" };
    expect(check({ ...clean, critical: [other] })[0]?.status).toBe("ok");
    const forged = {
      ...clean,
      critical: [{ ...other, task: task.id, probe: "fake metrics on stdout", evidence: "forged" }],
    };
    const [refused] = check(forged);
    expect(refused?.status).toBe("fail");
    expect(refused?.message).toContain("audit: fake metrics on stdout broken (forged)");
    expect(check(forged, ["prisonersDilemma"], "pd")[0]?.status).toBe("ok");
    // Findings that could not be read fail a check of their own; the task's own check still runs.
    const unreadable = check({ ...clean, unreadable: "SQLiteError: file is not a database" });
    expect(unreadable.map((r) => [r.name, r.status])).toEqual([
      ["audit findings", "fail"],
      ["task prisonersDilemma: reward integrity", "ok"],
    ]);
    expect(unreadable[0]?.message).toBe("/runs/x/air.db cannot be read: SQLiteError: file is not a database");
  });
});
