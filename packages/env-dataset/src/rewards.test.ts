import { describe, expect, test } from "bun:test";
import { createLogger, type PluginContext, type RewardFunction, type Trajectory } from "@air/core";
import { makeTrajectory, makeTurn } from "@air/core/testing";
import { exactMatchReward, formatReward, mcLetterReward, numericReward } from "./rewards.ts";

const ctx: PluginContext = {
  log: createLogger("t", () => {}),
  runDir: "/tmp",
  configDir: "/tmp",
  runName: "t",
  seed: 0,
  modelName: "m",
  signal: new AbortController().signal,
  emit: () => {},
};

function trajectory(texts: string[], answer: string, finalIndex = texts.length - 1): Trajectory {
  return makeTrajectory({
    id: "r",
    turns: texts.map((text, index) =>
      makeTurn({
        index,
        completionText: text,
        promptTokenIds: [],
        completionTokenIds: [],
        action: { text },
        info: { answer, final: index === finalIndex },
      }),
    ),
  });
}

async function make(
  def: { create: (c: never, ctx: PluginContext) => unknown; configSchema: unknown },
  config = {},
) {
  const schema = def.configSchema as { parse: (x: unknown) => unknown };
  return (await def.create(schema.parse(config) as never, ctx)) as RewardFunction;
}

describe("rubric rewards", () => {
  test("mc-letter scores only the answer turn", async () => {
    const reward = await make(mcLetterReward);
    expect(await reward.score(trajectory(["The answer is (C)"], "C"))).toEqual({
      turns: [1],
      total: 1,
      metrics: { score: 1, extracted: 1 },
    });
    expect(await reward.score(trajectory(["B", "so the answer is \\boxed{D}"], "D"))).toMatchObject({
      turns: [0, 1],
      total: 1,
    });
    expect(await reward.score(trajectory(["I don't know"], "C"))).toMatchObject({
      total: 0,
      metrics: { extracted: 0 },
    });
    expect(await reward.score(trajectory(["(C)", "A"], "C", 0))).toMatchObject({ turns: [1, 0], total: 1 });
    expect(() => reward.score(trajectory(["C"], "42"))).toThrow(/not one of the letters/);
  });
  test("exact-match normalizes case, whitespace and boxes; extract_regex picks the answer", async () => {
    const reward = await make(exactMatchReward);
    expect((await reward.score(trajectory(["  new YORK. "], "New York"))).total).toBe(1);
    expect((await reward.score(trajectory(["\\boxed{Paris}"], "paris"))).total).toBe(1);
    expect((await reward.score(trajectory(["Paris, France"], "paris"))).total).toBe(0);
    const strict = await make(exactMatchReward, { case_sensitive: true });
    expect((await strict.score(trajectory(["paris"], "Paris"))).total).toBe(0);
    const picked = await make(exactMatchReward, { extract_regex: "answer is (.+)$" });
    expect((await picked.score(trajectory(["Thinking...\nThe answer is Paris"], "Paris"))).total).toBe(1);
    expect((await picked.score(trajectory(["Paris"], "Paris"))).metrics).toEqual({ score: 0, extracted: 0 });
  });
  test("numeric uses absolute and relative tolerance", async () => {
    const reward = await make(numericReward, { rel_tol: 0.01 });
    expect((await reward.score(trajectory(["so x = 100.5"], "100"))).total).toBe(1);
    expect((await reward.score(trajectory(["so x = 102"], "100"))).total).toBe(0);
    expect((await reward.score(trajectory(["The answer is 1,000"], "1000"))).total).toBe(1);
    const exact = await make(numericReward, { abs_tol: 0, rel_tol: 0 });
    expect((await exact.score(trajectory(["0.75"], "3/4"))).total).toBe(1);
    expect((await exact.score(trajectory(["0.7501"], "3/4"))).total).toBe(0);
  });
  test("format rewards the required shape and needs no gold answer", async () => {
    const reward = await make(formatReward, { penalty: -0.5 });
    expect((await reward.score(trajectory(["The answer is B"], ""))).total).toBe(1);
    expect((await reward.score(trajectory(["\\boxed{7}"], ""))).total).toBe(1);
    expect((await reward.score(trajectory(["B"], ""))).total).toBe(-0.5);
    const custom = await make(formatReward, { pattern: "^<answer>.*</answer>$", flags: "s" });
    expect((await custom.score(trajectory(["<answer>B</answer>"], ""))).total).toBe(1);
  });
  test("a turn without a gold answer is an error that says why", async () => {
    const reward = await make(mcLetterReward);
    const t = trajectory(["C"], "C");
    t.turns[0]!.info = {};
    expect(() => reward.score(t)).toThrow(/no info\.answer/);
  });
});
