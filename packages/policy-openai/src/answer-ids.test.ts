import { describe, expect, test } from "bun:test";
import { parseChatAnswer } from "./answer-ids.ts";

/** A vLLM-shaped answer (`return_token_ids`): the prompt ids at the top level, after choices and usage. */
function vllm(prompt: number[], content = "DISCUSSION\nls"): string {
  return JSON.stringify({
    id: "chatcmpl-1",
    choices: [
      { index: 0, message: { role: "assistant", content }, finish_reason: "stop", token_ids: [7, 8] },
    ],
    usage: { prompt_tokens: prompt.length, completion_tokens: 2 },
    prompt_logprobs: null,
    prompt_token_ids: prompt,
  });
}

const turn1 = [32001, 5, 6, 32000, 32003];
const turn2 = [...turn1, 7, 8, 32000, 32002, 9, 10, 32000, 32003];

describe("parseChatAnswer", () => {
  test("with the previous prompt's cursor, only the new ids are read; the answer equals JSON.parse's", () => {
    const first = parseChatAnswer(vllm(turn1));
    expect(first.cursor?.count).toBe(turn1.length);
    // The previous ids come from the hint: prove it by handing back different ids of the same count.
    const forged = turn1.map((id) => id + 1);
    const read = parseChatAnswer(vllm(turn2), { ids: forged, cursor: first.cursor! });
    const ids = (read.answer as { prompt_token_ids: number[] }).prompt_token_ids;
    expect(ids.slice(turn1.length)).toEqual(turn2.slice(turn1.length));
    expect(ids.slice(0, turn1.length)).toEqual(forged);
    expect(read.cursor?.count).toBe(turn2.length);
    // With the true previous ids the whole answer is what JSON.parse gives.
    const real = parseChatAnswer(vllm(turn2), { ids: Int32Array.from(turn1), cursor: first.cursor! });
    expect(real.answer).toEqual(JSON.parse(vllm(turn2)));
  });

  test("a prompt that does not extend the previous one (history elided, re-rendered) is read whole", () => {
    const first = parseChatAnswer(vllm(turn1));
    const changed = [32001, 5, 99, 32000, 32003, 7, 8];
    const read = parseChatAnswer(vllm(changed), { ids: turn1, cursor: first.cursor! });
    expect(read.answer).toEqual(JSON.parse(vllm(changed)));
    // Same text but a different id count handed back: not trusted either.
    const short = parseChatAnswer(vllm(turn2), { ids: turn1.slice(1), cursor: first.cursor! });
    expect(short.answer).toEqual(JSON.parse(vllm(turn2)));
    // A prompt equal to the previous one (nothing new) is read whole.
    const same = parseChatAnswer(vllm(turn1), { ids: [0, 0, 0, 0, 0], cursor: first.cursor! });
    expect(same.answer).toEqual(JSON.parse(vllm(turn1)));
  });

  test("the key quoted inside the reply text is not taken for the list", () => {
    const content = 'echo \'"prompt_token_ids":[1,2]\' and \\"prompt_token_ids":[3]';
    const first = parseChatAnswer(vllm(turn1, content));
    expect(first.answer).toEqual(JSON.parse(vllm(turn1, content)));
    const read = parseChatAnswer(vllm(turn2, content), { ids: turn1, cursor: first.cursor! });
    expect(read.answer).toEqual(JSON.parse(vllm(turn2, content)));
    expect(read.cursor?.count).toBe(turn2.length);
  });

  test("SGLang's list in choices[0] stays there", () => {
    const sglang = (prompt: number[]) =>
      JSON.stringify({ choices: [{ message: { content: "x" }, prompt_token_ids: prompt, token_ids: [7] }] });
    const first = parseChatAnswer(sglang(turn1));
    const read = parseChatAnswer(sglang(turn2), { ids: turn1, cursor: first.cursor! });
    expect(read.answer).toEqual(JSON.parse(sglang(turn2)));
    expect(read.cursor?.count).toBe(turn2.length);
  });

  test("no list: no cursor; malformed JSON throws as JSON.parse does", () => {
    expect(parseChatAnswer('{"choices":[],"prompt_token_ids":null}').cursor).toBeUndefined();
    expect(() => parseChatAnswer('{"choices":[],"prompt_token_ids":[1,2')).toThrow();
    const first = parseChatAnswer(vllm(turn1));
    const broken = `${vllm(turn2).slice(0, -1)}`;
    expect(() => parseChatAnswer(broken, { ids: turn1, cursor: first.cursor! })).toThrow();
  });
});
