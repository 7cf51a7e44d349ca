import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createLogger, type Environment, type PluginContext } from "@air/core";
import datasetEnv, { datasetEnvConfig } from "./env.ts";
import { buildExamples, type DatasetExampleData, type DatasetSource } from "./examples.ts";
import { readRows } from "./rows.ts";

const REPO = resolve(import.meta.dir, "../../..");
let dir = "";

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "air-env-dataset-"));
  const rows = Array.from({ length: 20 }, (_, i) => ({
    q: `What is ${i} + 1?`,
    a: i + 1,
    cat: i % 2 ? "odd" : "even",
  }));
  writeFileSync(join(dir, "rows.jsonl"), `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
  writeFileSync(
    join(dir, "rows.csv"),
    `q,a,cat\n${rows.map((r) => `"${r.q}",${r.a},${r.cat}`).join("\n")}\n`,
  );
  writeFileSync(join(dir, "bad.jsonl"), '{"q": 1}\nnot json\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const source = (over: Partial<DatasetSource> = {}): DatasetSource => ({
  file: join(dir, "rows.jsonl"),
  format: "auto",
  evalFraction: 0.25,
  numTrainExamples: -1,
  numEvalExamples: -1,
  seed: 7,
  shuffle: true,
  promptTemplate: "{q}",
  answerField: "a",
  ...over,
});

function context(): PluginContext {
  return {
    log: createLogger("dataset", () => {}),
    runDir: dir,
    configDir: dir,
    runName: "t",
    seed: 3,
    modelName: "m",
    signal: new AbortController().signal,
    emit: () => {},
  };
}

describe("loading", () => {
  test("JSONL and CSV give the same rows (CSV values are text)", () => {
    const jsonl = readRows(join(dir, "rows.jsonl"));
    const csv = readRows(join(dir, "rows.csv"));
    expect(csv.length).toBe(20);
    expect(csv.map((r) => r.q)).toEqual(jsonl.map((r) => r.q));
    expect(csv[3]?.a).toBe("4");
  });
  test("errors name the file and line", () => {
    expect(() => readRows(join(dir, "bad.jsonl"))).toThrow(/bad\.jsonl:2: invalid JSON/);
    expect(() => readRows(join(dir, "rows.txt"))).toThrow(/cannot tell the format/);
  });
});

describe("splits", () => {
  test("held-out eval split is disjoint, deterministic for a seed, and differs across seeds", () => {
    const a = buildExamples(source());
    expect(a.train.length).toBe(15);
    expect(a.eval.length).toBe(5);
    const trainIds = new Set(a.train.map((e) => e.id));
    expect(a.eval.some((e) => trainIds.has(e.id))).toBe(false);
    expect(buildExamples(source()).train.map((e) => e.id)).toEqual(a.train.map((e) => e.id));
    expect(buildExamples(source({ seed: 8 })).train.map((e) => e.id)).not.toEqual(a.train.map((e) => e.id));
  });
  test("num_*_examples cap without changing which rows are eval", () => {
    const all = buildExamples(source());
    const capped = buildExamples(source({ numTrainExamples: 4, numEvalExamples: 2 }));
    expect(capped.train.map((e) => e.id)).toEqual(all.train.slice(0, 4).map((e) => e.id));
    expect(capped.eval.map((e) => e.id)).toEqual(all.eval.slice(0, 2).map((e) => e.id));
  });
  test("no shuffle keeps file order; a separate eval file is used whole", () => {
    const ordered = buildExamples(source({ shuffle: false, evalFraction: 0 }));
    expect(ordered.train.map((e) => (e.data as DatasetExampleData).row)).toEqual([...Array(20).keys()]);
    const twoFiles = buildExamples(source({ evalFile: join(dir, "rows.csv") }));
    expect(twoFiles.train.length).toBe(20);
    expect(twoFiles.eval.length).toBe(20);
  });
  test("prompt, system prompt, answer, task field and ids", () => {
    const { train } = buildExamples(
      source({
        promptTemplate: "Q: {q}",
        systemPrompt: "Be brief.",
        taskField: "cat",
        idField: "q",
        shuffle: false,
        evalFraction: 0,
      }),
    );
    const first = train[0]!;
    expect(first.id).toBe("What is 0 + 1?");
    expect(first.task).toBe("even");
    const data = first.data as DatasetExampleData;
    expect(data.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Q: What is 0 + 1?" },
    ]);
    expect(data.answer).toBe("1");
    expect(buildExamples(source()).train[0]!.task).toBe("rows");
  });
  test("a template naming a missing field and a missing answer field are errors", () => {
    expect(() => buildExamples(source({ promptTemplate: "{question}" }))).toThrow(/names field "question"/);
    expect(() => buildExamples(source({ answerField: "gold" }))).toThrow(/no answer field "gold"/);
  });
});

describe("the env plugin", () => {
  test("single-turn episode: the step reports the gold answer and ends", async () => {
    const config = datasetEnvConfig.parse({ file: "rows.jsonl", answer_field: "a", prompt_template: "{q}" });
    const env = (await datasetEnv.create(config, context())) as Environment;
    const [example] = await env.examples("eval");
    const session = await env.open(example!, { rolloutId: "r", signal: new AbortController().signal });
    const messages = await session.start();
    expect(messages.at(-1)?.role).toBe("user");
    const result = await session.step({ text: "whatever" });
    expect(result.done).toBe(true);
    expect(result.info).toEqual({
      answer: (example!.data as DatasetExampleData).answer,
      turn: 0,
      final: true,
    });
    await session.close();
  });
  test("the split does not follow run.seed unless env.seed says so", async () => {
    const config = datasetEnvConfig.parse({ file: "rows.jsonl", answer_field: "a", prompt_template: "{q}" });
    const ids = async (seed: number, c = config) =>
      ((await datasetEnv.create(c, { ...context(), seed })) as Environment)
        .examples("eval")
        .then((e) => e.map((x) => x.id));
    expect(await ids(3)).toEqual(await ids(4));
    expect(await ids(3, { ...config, seed: 1 })).not.toEqual(await ids(3));
  });
  test("fixed multi-turn episode sends the follow-up prompt and marks only the last turn final", async () => {
    const config = datasetEnvConfig.parse({
      file: "rows.csv",
      answer_field: "a",
      prompt_template: "{q}",
      turns: 3,
    });
    const env = (await datasetEnv.create(config, context())) as Environment;
    const [example] = await env.examples("train");
    const session = await env.open(example!, { rolloutId: "r", signal: new AbortController().signal });
    await session.start();
    const steps = [
      await session.step({ text: "1" }),
      await session.step({ text: "2" }),
      await session.step({ text: "3" }),
    ];
    expect(steps.map((s) => s.done)).toEqual([false, false, true]);
    expect(steps[0]!.observation).toBe(config.followup_prompt);
    expect(steps.map((s) => s.info?.final)).toEqual([false, false, true]);
  });
  test("a fork continues from the same turn and its steps are not seen by the original", async () => {
    const config = datasetEnvConfig.parse({
      file: "rows.csv",
      answer_field: "a",
      prompt_template: "{q}",
      turns: 3,
    });
    const env = (await datasetEnv.create(config, context())) as Environment;
    expect(env.canFork).toBe(true);
    const [example] = await env.examples("train");
    const session = await env.open(example!, { rolloutId: "r", signal: new AbortController().signal });
    await session.start();
    await session.step({ text: "1" });
    const fork = await session.fork!();
    expect((await fork.step({ text: "2" })).info?.turn).toBe(1);
    expect((await fork.step({ text: "3" })).done).toBe(true);
    const original = await session.step({ text: "2" });
    expect(original.info?.turn).toBe(1);
    expect(original.done).toBe(false);
    await Promise.all([fork.close(), session.close()]);
  });
  test("a recorded state (rl --resume) continues at its turn in a new env; one without a turn count is refused", async () => {
    const config = datasetEnvConfig.parse({
      file: "rows.csv",
      answer_field: "a",
      prompt_template: "{q}",
      turns: 3,
    });
    const env = (await datasetEnv.create(config, context())) as Environment;
    const [example] = await env.examples("train");
    const signal = new AbortController().signal;
    const session = await env.open(example!, { rolloutId: "r", signal });
    await session.start();
    await session.step({ text: "1" });
    const state = JSON.parse(JSON.stringify(await session.saveState!(0)));
    const again = (await datasetEnv.create(config, context())) as Environment;
    const restored = await again.restore!(example!, { rolloutId: "r", signal, state });
    expect((await restored.step({ text: "2" })).info?.turn).toBe(1);
    expect((await restored.step({ text: "3" })).done).toBe(true);
    await expect(again.restore!(example!, { rolloutId: "r", signal, state: {} })).rejects.toThrow(
      "no turn count",
    );
  });
  test("the project's generated dataset loads with the shipped prompt layout", () => {
    const { train, eval: held } = buildExamples(
      source({
        file: join(REPO, "data/dataset/algebra-mc/train.jsonl"),
        evalFile: join(REPO, "data/dataset/algebra-mc/eval.jsonl"),
        promptTemplate: "{question}\n{options|choices}",
        answerField: "correct",
        taskField: "task",
      }),
    );
    expect(train.length).toBe(600);
    expect(held.length).toBe(120);
    const prompt = (train[0]!.data as DatasetExampleData).messages[0]!.content;
    expect(prompt).toMatch(/\nA\)[\d.]+\nB\)[\d.]+\nC\)[\d.]+\nD\)[\d.]+\nE\)[\d.]+$/);
    expect(new Set(train.map((e) => e.task)).size).toBe(6);
    expect(train.every((e) => /^[A-E]$/.test((e.data as DatasetExampleData).answer))).toBe(true);
  });
});
