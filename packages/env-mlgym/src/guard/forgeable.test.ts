import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, recordAudits } from "@air/logger-sqlite";
import { loadTask } from "../task.ts";
import { forgeChecks, proxyProblem } from "./forgeable.ts";
import { guarded } from "./guard.ts";

const FIXTURES = join(import.meta.dir, "..", "..", "fixtures");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

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

  test("a critical finding of the latest audit in the run's store refuses the task unless allowed", async () => {
    const task = await loadTask(join(FIXTURES, "known-game"), "prisonersDilemma");
    const runDir = mkdtempSync(join(tmpdir(), "air-forgeable-"));
    dirs.push(runDir);
    const db = openStore(join(runDir, "air.db"));
    const row = { config: "x.toml", task: task.id, group: "cheat", score: undefined };
    recordAudits(db, [
      {
        ...row,
        createdAt: 1,
        probe: "early exit at import",
        verdict: "broken",
        critical: true,
        evidence: "old",
      },
      {
        ...row,
        createdAt: 2,
        probe: "early exit at import",
        verdict: "held",
        critical: false,
        evidence: "new",
      },
    ]);
    expect(forgeChecks([{ name: "prisonersDilemma", task }], [], runDir)[0]?.status).toBe("ok");
    recordAudits(db, [
      {
        ...row,
        createdAt: 3,
        probe: "fake metrics on stdout",
        verdict: "broken",
        critical: true,
        evidence: "forged",
      },
    ]);
    db.$client.close();
    const [refused] = forgeChecks([{ name: "prisonersDilemma", task }], [], runDir);
    expect(refused?.status).toBe("fail");
    expect(refused?.message).toContain("audit: fake metrics on stdout broken (forged)");
    expect(forgeChecks([{ name: "pd", task }], ["prisonersDilemma"], runDir)[0]?.status).toBe("ok");
  });
});
