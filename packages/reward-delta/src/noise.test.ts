import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AuditFindings, ScoreSpec, Trajectory } from "@air/core";
import { makeContext, makeTrajectory, makeTurn } from "@air/core/testing";
import { deltaRewards } from "./delta.ts";
import { DELTA_DEFAULTS, deltaConfigSchema } from "./options.ts";
import { deltaReward } from "./plugin.ts";

const dir = mkdtempSync(join(tmpdir(), "air-delta-noise-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const spec: ScoreSpec = { priorityMetric: "m", directions: {}, baseline: { m: 0.5 } };
function trajectory(task: string, scores: Array<number | null>): Trajectory {
  const turns = scores.map((s, index) => {
    const base = makeTurn({ index, completionLogprobs: [-0.1] });
    return s === null ? base : { ...base, stepKind: "validate", scores: { m: s } };
  });
  return makeTrajectory({ task, turns, score: spec });
}

describe("min_improvement", () => {
  test("a change smaller than it earns 0 and keeps the reference; a larger one counts from there", () => {
    const config = { ...DELTA_DEFAULTS, min_improvement: 0.05 };
    // 0.52 and 0.49 are within 0.05 of the baseline 0.5: no reward, reference stays 0.5; 0.58 pays 0.08.
    const r = deltaRewards(trajectory("t", [0.52, 0.49, 0.58]), config);
    expect(r.turns[0]).toBe(0);
    expect(r.turns[1]).toBe(0);
    expect(r.turns[2]).toBeCloseTo(0.08, 12);
    expect(r.metrics).toMatchObject({ below_min_turns: 2, improved_turns: 1, worsened_turns: 0 });
    // Without it every change counts.
    const plain = deltaRewards(trajectory("t", [0.52, 0.49, 0.58]), DELTA_DEFAULTS);
    expect(plain.turns.map((x) => Number(x.toFixed(6)))).toEqual([0.02, -0.03, 0.09]);
    // The terminal term ignores a final change below it too.
    const terminal = deltaRewards(trajectory("t", [0.52]), { ...config, terminal_weight: 1 });
    expect(terminal.total).toBe(0);
  });

  test('schema: a number ≥ 0 or "noise"', () => {
    expect(deltaConfigSchema.parse({}).min_improvement).toBe(0);
    expect(deltaConfigSchema.parse({ min_improvement: "noise" }).min_improvement).toBe("noise");
    expect(deltaConfigSchema.safeParse({ min_improvement: -1 }).success).toBe(false);
    expect(deltaConfigSchema.safeParse({ min_improvement: "auto" }).success).toBe(false);
  });

  test('"noise": each task\'s noise from the latest audit (ctx.audit); none is an error', async () => {
    const runDir = join(dir, "run");
    const config = deltaConfigSchema.parse({ min_improvement: "noise" });
    const logs: string[] = [];
    const context = (audit?: AuditFindings) =>
      makeContext({ runDir, audit, sink: (_l, _s, m) => logs.push(m) });
    const launch = (audit?: AuditFindings) => ({ configDir: dir, runDir, audit });
    expect(() => deltaReward.create(config, context())).toThrow(
      /run `bun run audit <config> --repeats 3` first .*no store yet/,
    );
    const preflight = deltaReward.launch!.preflight!;
    expect(() => preflight(config, launch())).toThrow(/bun run audit/);
    expect(preflight(deltaConfigSchema.parse({}), launch())).toEqual([]);
    const source = join(runDir, "air.db");
    const empty: AuditFindings = { source, noise: {}, critical: [] };
    expect(() => deltaReward.create(config, context(empty))).toThrow(/no evaluation-noise finding/);
    expect(() =>
      deltaReward.create(config, context({ ...empty, unreadable: "SQLiteError: file is not a database" })),
    ).toThrow(/air\.db cannot be read: SQLiteError/);
    const audit: AuditFindings = { ...empty, noise: { exact: 0, noisy: 0.05 } };
    expect(await preflight(config, launch(audit))).toEqual([
      {
        name: "delta: evaluation noise for min_improvement",
        status: "ok",
        message: 'from the latest audit: {"exact":0,"noisy":0.05}',
      },
    ]);
    const reward = await deltaReward.create(config, context(audit));
    const scores = [0.54, 0.6];
    expect((await reward.score(trajectory("noisy", scores))).turns).toEqual([0, expect.closeTo(0.1, 12)]);
    expect((await reward.score(trajectory("exact", scores))).turns.map((x) => Number(x.toFixed(6)))).toEqual([
      0.04, 0.06,
    ]);
    await reward.score(trajectory("other", scores));
    await reward.score(trajectory("other", scores));
    expect(logs.filter((m) => m.includes("no evaluation noise for task other"))).toHaveLength(1);
  });
});
