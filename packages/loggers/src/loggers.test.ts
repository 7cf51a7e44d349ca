import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixtureRegistry, runFixture } from "@air/logger-sqlite/testing";
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
    const step = JSON.parse(lines[events.findIndex((e) => e.event === "step:end")] ?? "{}") as {
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

  test("writes eval:end too (its event list is core's EVENT_NAMES)", async () => {
    const { summary, runDir } = await runFixture({
      dir,
      name: "with-eval",
      maxSteps: 2,
      evalEvery: 1,
      registry: fixtureRegistry().register(jsonlLogger),
      extraToml: '\n[[logger]]\nplugin = "jsonl"\n',
    });
    expect(summary.status).toBe("completed");
    const events = readFileSync(join(runDir, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as { event: string; trajectories?: Array<{ turns: Array<Record<string, unknown>> }> },
      );
    const evals = events.filter((e) => e.event === "eval:end");
    expect(evals).toHaveLength(2);
    expect(evals[0]!.trajectories!.length).toBeGreaterThan(0);
    expect(evals[0]!.trajectories![0]!.turns[0]!.promptMessages).toBeUndefined();
  });
});
