import { describe, expect, test } from "bun:test";
import { isContextLengthError, readCompletion, readLlamaCompletion } from "./completion.ts";

describe("readCompletion", () => {
  test("reads vLLM's id fields and logprobs", () => {
    const read = readCompletion({
      prompt_token_ids: [1, 2, 3],
      choices: [
        {
          message: { content: "hi" },
          finish_reason: "length",
          token_ids: [7, 8],
          logprobs: {
            content: [
              { token: "h", logprob: -0.5 },
              { token: "i", logprob: -1 },
            ],
          },
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 2 },
    });
    expect(read).toEqual({
      text: "hi",
      finishReason: "length",
      promptTokenIds: [1, 2, 3],
      completionTokenIds: [7, 8],
      logprobs: [-0.5, -1],
      usage: { promptTokens: 3, completionTokens: 2 },
    });
  });

  test("recovers completion ids from token_id:N tokens only when every token has one", () => {
    const entries = (tokens: string[]) => ({
      choices: [
        {
          message: { content: "ab" },
          logprobs: { content: tokens.map((token) => ({ token, logprob: -1 })) },
        },
      ],
    });
    expect(readCompletion(entries(["token_id:5", "token_id:6"])).completionTokenIds).toEqual([5, 6]);
    expect(readCompletion(entries(["token_id:5", "b"])).completionTokenIds).toBeUndefined();
  });

  test("a plain OpenAI answer leaves ids and logprobs undefined", () => {
    const read = readCompletion({
      choices: [{ message: { content: null }, finish_reason: "stop", logprobs: null }],
    });
    expect(read).toEqual({
      text: "",
      finishReason: "stop",
      promptTokenIds: undefined,
      completionTokenIds: undefined,
    });
  });

  test("garbage does not throw", () => {
    for (const answer of [null, 3, "x", { choices: "no" }, { choices: [null] }]) {
      expect(readCompletion(answer).text).toBe("");
    }
  });
});

describe("isContextLengthError", () => {
  test.each([
    ["This model's maximum context length is 4096 tokens. However, you requested 5000 tokens", true],
    ["'max_tokens' is too large: 900. This model's maximum context length is 1024 tokens", true],
    ["The prompt (total length 9000) is longer than the maximum model length of 8192.", true],
    ["The model `x` does not exist.", false],
  ])("%p", (message, expected) => {
    expect(isContextLengthError(message)).toBe(expected);
  });
});

describe("llama.cpp's native /completion", () => {
  test("exact ids from `tokens`; a token whose logprob entry llama.cpp left out (UTF-8 split) is NaN, counted", async () => {
    // captured from llama-server b11669 (air-llama) on the tiny GGUF, byte tokens <0xC3> (200) and <0xA9> (174)
    // pushed up with logit_bias: 8 tokens, 3 logprob entries
    const answer = await Bun.file(
      new URL("../fixtures/llama.cpp/completion-utf8-split.json", import.meta.url),
    ).json();
    const read = readLlamaCompletion(answer);
    expect(read.completionTokenIds).toEqual([200, 174, 338, 200, 200, 200, 174, 200]);
    expect(read.missingLogprobs).toBe(5);
    expect(read.logprobs?.map((l) => Number.isFinite(l))).toEqual([
      false,
      true,
      true,
      false,
      false,
      false,
      true,
      false,
    ]);
    expect(read.logprobs?.[1]).toBeCloseTo(Math.log(answer.completion_probabilities[0].prob), 10);
    expect(read.finishReason).toBe("length");
  });

  test("an answer without splits: every token has its logprob", () => {
    const read = readLlamaCompletion({
      content: "ok",
      tokens: [5, 6],
      completion_probabilities: [
        { id: 5, prob: 0.5 },
        { id: 6, prob: 0.25 },
      ],
      stop_type: "eos",
      tokens_predicted: 2,
      tokens_evaluated: 9,
    });
    expect(read).toMatchObject({ completionTokenIds: [5, 6], missingLogprobs: 0, finishReason: "stop" });
    expect(read.logprobs).toEqual([Math.log(0.5), Math.log(0.25)]);
  });
});
