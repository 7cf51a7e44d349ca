import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EventHandlers } from "@air/core";
import { fixtureRegistry, runFixture } from "@air/logger-sqlite/testing";
import { consoleHooks } from "./console.ts";
import { jsonlLogger } from "./jsonl.ts";

const dir = mkdtempSync(join(tmpdir(), "air-loggers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("jsonl logger", () => {
  test("writes every event of a real run as JSON lines, batches without token arrays", async () => {
    const { summary, runDir } = await runFixture({
      dir,
      maxSteps: 2,
      registry: fixtureRegistry().register(jsonlLogger),
      extraToml: '\n[[logger]]\nplugin = "jsonl"\n',
    });
    expect(summary.status).toBe("completed");
    const lines = readFileSync(join(runDir, "events.jsonl"), "utf8").trim().split("\n");
    const events = lines.map((l) => JSON.parse(l) as { event: string; [k: string]: unknown });
    const count = (name: string) => events.filter((e) => e.event === name).length;
    expect(count("run:start")).toBe(1);
    expect(count("step:end")).toBe(2);
    expect(count("rollout:end")).toBe(8);
    expect(count("turn:end")).toBe(48);
    expect(count("weights:updated")).toBe(2);
    expect(events.at(-1)!.event).toBe("run:end");
    const step = events.find((e) => e.event === "step:end")! as unknown as {
      batch: { sampleCount: number; samples?: unknown };
      metrics: Record<string, number>;
    };
    expect(step.batch.sampleCount).toBe(24);
    expect(step.batch.samples).toBeUndefined();
    expect(typeof step.metrics["reward/mean"]).toBe("number");
    const turn = events.find((e) => e.event === "turn:end")!.turn as Record<string, unknown>;
    expect(turn.promptMessages).toBeUndefined();
    expect(turn.promptMessageCount).toBe(2);
    expect(turn.completionTokens).toBe(4);
    expect(turn.completionTokenIds).toBeUndefined();
    expect(typeof turn.completionText).toBe("string");
  });
});

describe("console logger", () => {
  test("prints one line per step with reward, causes, warnings and errors", async () => {
    const lines: string[] = [];
    const { hooks } = consoleHooks((l) => lines.push(l), { showWarnings: true });
    const h = hooks as Required<EventHandlers>;
    await h["step:start"]({ step: 4, policyVersion: 3 });
    await h.log({ level: "error", source: "env", message: "boom", timeMs: 0 });
    await h.log({ level: "warn", source: "env", message: "meh", timeMs: 0 });
    await h["weights:updated"]({ weights: { version: 4 }, metrics: { loss: 0.25 } });
    await h["step:end"]({
      step: 4,
      trajectories: [],
      batch: { schemaVersion: 1, step: 4, samples: [], metrics: {} },
      metrics: {
        "reward/mean": 0.5,
        "reward/min": 0,
        "reward/max": 1,
        "rollout/no_score_frac": 0.25,
        "group/zero_variance_frac": 1,
      },
      warnings: ["every group has zero reward variance"],
    });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toStartWith("step 4 | reward 0.500 [0.00, 1.00]");
    expect(lines[0]).toContain("no-score 25%");
    expect(lines[0]).toContain("zero-var 100%");
    expect(lines[0]).toContain("loss 0.2500");
    expect(lines[0]).toContain("warnings 1 | error logs 1 |");
    expect(lines[1]).toBe("  warning: every group has zero reward variance\n");
    await h["run:end"]({ status: "failed", error: "trainer died", unsettled: [] });
    expect(lines[2]).toBe("run failed: trainer died\n");
  });
});
