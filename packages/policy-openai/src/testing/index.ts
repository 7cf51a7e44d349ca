/**
 * `@air/policy-openai/testing`: the one simulated vLLM server, for this package's tests, the integration tests
 * and the benchmarks (never production code).
 * @example import { SimVllm, charTokenizer } from "@air/policy-openai/testing";
 */
export { type RecordedRequest, SimVllm, type SimVllmOptions, type SimVllmStats } from "./sim-vllm.ts";
export {
  byteTokenizer,
  charTokenizer,
  fakeLogprob,
  fakeTokens,
  renderIds,
  renderPrompt,
  type SimTokenizer,
  simTokens,
} from "./tokenizers.ts";
