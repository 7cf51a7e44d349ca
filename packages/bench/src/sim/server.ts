import { charTokenizer, SimVllm, type SimVllmStats } from "@air/policy-openai/testing";
import { type LatencySpec, latencySampler } from "./latency.ts";

export { renderIds, simTokens } from "@air/policy-openai/testing";

/** Options of the simulated OpenAI-compatible (vLLM-flavoured) server. */
export interface SimServerOptions {
  /** Served model name. */
  model: string;
  /** Time to answer one chat completion. */
  latency: LatencySpec;
  seed: number;
  /** Completion tokens per answer (the reply text is cut or padded to about this many tokens). */
  completionTokens: number;
  maxModelLen: number;
  /** Port to bind on 127.0.0.1 (0: any free port). */
  port?: number;
}

/** Counters the server keeps; `GET /sim/stats` returns them. */
export type SimServerStats = SimVllmStats;

const DISCUSSION = "I will look at the files in the workspace and then run the baseline to see its score. ";
const COMMAND = "\n```\nls -la data\n```";

/** The reply: a discussion padded to about `tokens` simulated tokens (4 characters each), then one command. */
function replyOf(tokens: number): string {
  const pad = Math.max(0, tokens * 4 - COMMAND.length - "DISCUSSION\n".length);
  return `DISCUSSION\n${DISCUSSION.repeat(Math.ceil(pad / DISCUSSION.length) + 1).slice(0, pad)}${COMMAND}`;
}

/**
 * The benchmarks' inference server: the one simulated vLLM (`SimVllm` from `@air/policy-openai/testing`, with
 * prime-rl's admin routes) with 4-character tokens (`charTokenizer`), one fixed MLGym-format reply of about
 * `completionTokens` tokens, answers delayed by a latency drawn from `latency`, requests not recorded.
 * @example
 * const sim = startSimServer({ model: "sim", latency: { dist: "fixed", median_ms: 50, spread: 0 },
 *   seed: 1, completionTokens: 40, maxModelLen: 32768 });
 * // policy base_url = sim.baseUrl; … sim.stop();
 */
export function startSimServer(options: SimServerOptions): {
  baseUrl: string;
  port: number;
  stats: SimServerStats;
  stop(): void;
} {
  const reply = replyOf(options.completionTokens);
  const sim = new SimVllm({
    model: options.model,
    maxModelLen: options.maxModelLen,
    tokenizer: charTokenizer,
    reply: () => reply,
    latencyMs: latencySampler(options.latency, options.seed),
    port: options.port ?? 0,
    record: false,
  });
  return { baseUrl: sim.baseUrl, port: sim.port, stats: sim.stats, stop: () => sim.stop() };
}
