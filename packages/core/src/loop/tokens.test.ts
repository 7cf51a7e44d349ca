import { describe, expect, test } from "bun:test";
import { makeTurn } from "../testing/builders.ts";
import type { Turn } from "../types.ts";
import { TokenLog } from "./tokens.ts";

/** Prompt k = prompt k-1 + completion k-1 + `grow` new tokens, each a fresh list as a server's JSON answer gives. */
function conversation(turns: number, first: number, grow: number, completion: number) {
  const out: Array<{ prompt: number[]; completion: number[] }> = [];
  let sequence = Array.from({ length: first }, (_, i) => i % 997);
  for (let k = 0; k < turns; k++) {
    const reply = Array.from({ length: completion }, (_, i) => 30_000 + ((k * 31 + i) % 1000));
    out.push({ prompt: [...sequence], completion: reply });
    sequence = [...sequence, ...reply, ...Array.from({ length: grow }, (_, i) => 20_000 + k + i)];
  }
  return out;
}

function record(log: TokenLog, shapes: Array<{ prompt: number[]; completion: number[] }>): Turn[] {
  const turns: Turn[] = [];
  for (const [index, s] of shapes.entries()) {
    const ids = log.append(s.prompt, s.completion, turns);
    turns.push(makeTurn({ index, promptTokenIds: ids.prompt, completionTokenIds: ids.completion }));
  }
  return turns;
}

const buffers = (turns: Turn[]) =>
  new Set(
    turns.flatMap((t) => [t.promptTokenIds, t.completionTokenIds].map((v) => (v as Int32Array).buffer)),
  );

describe("TokenLog", () => {
  test("30 growing prompts are held once: every turn views one buffer about the size of the last prompt", () => {
    const shapes = conversation(30, 400, 250, 100);
    const turns = record(new TokenLog(), shapes);
    for (const [k, s] of shapes.entries()) {
      expect(Array.from(turns[k]?.promptTokenIds ?? [])).toEqual(s.prompt);
      expect(Array.from(turns[k]?.completionTokenIds ?? [])).toEqual(s.completion);
    }
    const held = [...buffers(turns)];
    expect(held).toHaveLength(1);
    const last = shapes.at(-1) as { prompt: number[]; completion: number[] };
    const tokens = last.prompt.length + last.completion.length;
    const copies = shapes.reduce((a, s) => a + s.prompt.length + s.completion.length, 0);
    expect(held[0]?.byteLength).toBeLessThanOrEqual(Math.ceil(4 * tokens * 1.125) + 1024);
    expect(copies).toBeGreaterThan(10 * tokens); // what per-turn copies would have held
  });

  test("a prompt that does not extend the sequence starts a new one; earlier turns keep their ids", () => {
    const log = new TokenLog();
    const turns = record(log, conversation(3, 10, 5, 4));
    const before = turns.map((t) => Array.from(t.promptTokenIds));
    const ids = log.append([9, 9, 9], [1], turns);
    expect(Array.from(ids.prompt)).toEqual([9, 9, 9]);
    expect(ids.prompt.buffer).not.toBe((turns[0]?.promptTokenIds as Int32Array | undefined)?.buffer);
    expect(turns.map((t) => Array.from(t.promptTokenIds))).toEqual(before);
    expect(log.size).toBe(4);
  });

  test("trim drops the spare capacity and keeps every view's contents", () => {
    const log = new TokenLog();
    const shapes = conversation(5, 50, 20, 10);
    const turns = record(log, shapes);
    log.trim(turns);
    expect(log.capacityBytes).toBe(4 * log.size);
    expect(buffers(turns).size).toBe(1);
    expect(turns.map((t) => Array.from(t.promptTokenIds))).toEqual(shapes.map((s) => s.prompt));
  });
});

describe("TokenLog.appendLogprobs", () => {
  test("every turn's logprobs view one buffer; growing it moves the earlier views; trim keeps their values", () => {
    const log = new TokenLog();
    const turns: Turn[] = [];
    const expected: number[][] = [];
    for (let k = 0; k < 30; k++) {
      const values = Array.from({ length: 100 }, (_, i) => -(k * 100 + i) / 1024);
      expected.push(values);
      const view = log.appendLogprobs(values, turns);
      turns.push(makeTurn({ index: k, completionLogprobs: view }));
    }
    const held = new Set(turns.map((t) => (t.completionLogprobs as Float32Array).buffer));
    expect(held.size).toBe(1);
    expect(turns.map((t) => Array.from(t.completionLogprobs))).toEqual(expected);
    log.trim(turns);
    const trimmed = (turns[0]?.completionLogprobs as Float32Array | undefined)?.buffer as ArrayBuffer;
    expect(trimmed.byteLength).toBe(4 * 30 * 100);
    expect(turns.every((t) => (t.completionLogprobs as Float32Array).buffer === trimmed)).toBe(true);
    expect(turns.map((t) => Array.from(t.completionLogprobs))).toEqual(expected);
  });
});
