import type { Server } from "bun";
import { type LatencySpec, latencySampler } from "./latency.ts";

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
export interface SimServerStats {
  chatRequests: number;
  /** `POST /tokenize` requests (a policy checking a prompt against the context window first). */
  tokenizeRequests: number;
  inFlight: number;
  peakInFlight: number;
  adminRequests: number;
}

const DISCUSSION = "I will look at the files in the workspace and then run the baseline to see its score. ";
const COMMAND = "\n```\nls -la data\n```";

/** The reply: a discussion padded to about `tokens` simulated tokens (4 characters each), then one command. */
function replyOf(tokens: number): string {
  const pad = Math.max(0, tokens * 4 - COMMAND.length - "DISCUSSION\n".length);
  return `DISCUSSION\n${DISCUSSION.repeat(Math.ceil(pad / DISCUSSION.length) + 1).slice(0, pad)}${COMMAND}`;
}

/**
 * The simulated tokenizer: one token per 4 characters, id from the characters (stable, cheap).
 * @example simTokens("abcdefgh").length // 2
 */
export function simTokens(text: string): number[] {
  const ids: number[] = [];
  for (let i = 0; i < text.length; i += 4) {
    let h = 17;
    for (let j = i; j < Math.min(i + 4, text.length); j++) h = (h * 31 + text.charCodeAt(j)) % 32_000;
    ids.push(h);
  }
  return ids;
}

const ROLE_IDS: Record<string, number> = { system: 32_001, user: 32_002, assistant: 32_003, tool: 32_004 };
const END_ID = 32_000;

/**
 * Prompt ids of `messages` as a chat template renders them: per message its role token, its content's
 * `simTokens`, an end token; then the assistant role token (the generation prompt). Like a real template the
 * rendering is prefix-consistent: turn k+1's prompt starts with turn k's prompt, its completion ids and the end
 * token, so a rollout's prompts share their prefix token for token.
 * @example renderIds([{ role: "user", content: "abcd" }]) // [32002, simTokens("abcd")[0], 32000, 32003]
 */
export function renderIds(messages: Array<{ role: string; content: string }>): number[] {
  const ids: number[] = [];
  for (const m of messages) {
    ids.push(ROLE_IDS[m.role] ?? 32_005);
    for (const id of simTokens(m.content)) ids.push(id);
    ids.push(END_ID);
  }
  ids.push(ROLE_IDS.assistant as number);
  return ids;
}

function errorBody(message: string, code: number) {
  return { error: { message, type: "BadRequestError", param: null, code } };
}

/**
 * A stand-in for vLLM with prime-rl's admin routes, for benchmarks: real HTTP on 127.0.0.1, the routes and
 * JSON shapes the `openai` policy reads (`prompt_token_ids`, `choices[0].token_ids`, logprob tokens as
 * `token_id:N`, `/tokenize`, `/pause`, `/update_weights`, `/resume`), answers delayed by a latency drawn
 * from `latency`. Not a model: the reply is one fixed MLGym-format command.
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
  const next = latencySampler(options.latency, options.seed);
  const stats: SimServerStats = {
    chatRequests: 0,
    tokenizeRequests: 0,
    inFlight: 0,
    peakInFlight: 0,
    adminRequests: 0,
  };
  const replyText = replyOf(options.completionTokens);
  const completion = simTokens(replyText);

  const chat = async (body: Record<string, unknown>): Promise<Response> => {
    const messages = (body.messages ?? []) as Array<{ role: string; content: string }>;
    const prompt = renderIds(messages);
    const maxTokens = Number(body.max_completion_tokens ?? body.max_tokens ?? 16);
    if (prompt.length + maxTokens > options.maxModelLen) {
      const msg = `This model's maximum context length is ${options.maxModelLen} tokens. However, you requested ${prompt.length + maxTokens} tokens.`;
      return Response.json(errorBody(msg, 400), { status: 400 });
    }
    stats.chatRequests++;
    stats.inFlight++;
    stats.peakInFlight = Math.max(stats.peakInFlight, stats.inFlight);
    try {
      await Bun.sleep(next());
      const ids = completion.slice(0, maxTokens);
      const text = ids.length < completion.length ? replyText.slice(0, ids.length * 4) : replyText;
      const asIds = body.return_tokens_as_token_ids === true;
      const withIds = body.return_token_ids === true;
      return Response.json({
        id: `chatcmpl-${stats.chatRequests}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: text },
            logprobs:
              body.logprobs === true
                ? {
                    content: ids.map((id) => ({
                      token: asIds ? `token_id:${id}` : "x",
                      logprob: -((id % 13) / 10) - 0.05,
                      bytes: [120],
                      top_logprobs: [],
                    })),
                  }
                : null,
            finish_reason: ids.length < completion.length ? "length" : "stop",
            stop_reason: null,
            token_ids: withIds ? ids : null,
          },
        ],
        usage: {
          prompt_tokens: prompt.length,
          completion_tokens: ids.length,
          total_tokens: prompt.length + ids.length,
        },
        prompt_logprobs: null,
        prompt_token_ids: withIds ? prompt : null,
      });
    } finally {
      stats.inFlight--;
    }
  };

  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    idleTimeout: 0,
    fetch: async (req) => {
      const url = new URL(req.url);
      const body =
        req.method === "POST" ? ((await req.json().catch(() => ({}))) as Record<string, unknown>) : {};
      switch (url.pathname) {
        case "/health":
          return new Response(null, { status: 200 });
        case "/sim/stats":
          return Response.json(stats);
        case "/sim/reset":
          stats.chatRequests = 0;
          stats.tokenizeRequests = 0;
          stats.adminRequests = 0;
          stats.peakInFlight = stats.inFlight;
          return Response.json(stats);
        case "/v1/models":
          return Response.json({
            object: "list",
            data: [
              { id: options.model, object: "model", owned_by: "vllm", max_model_len: options.maxModelLen },
            ],
          });
        case "/tokenize": {
          stats.tokenizeRequests++;
          const tokens = Array.isArray(body.messages)
            ? renderIds(body.messages as never)
            : simTokens(String(body.prompt ?? ""));
          return Response.json({
            count: tokens.length,
            max_model_len: options.maxModelLen,
            tokens,
            token_strs: null,
          });
        }
        case "/v1/chat/completions":
          return await chat(body);
        case "/pause":
        case "/resume":
        case "/update_weights":
          stats.adminRequests++;
          return Response.json({ status: "ok" });
        default:
          return Response.json(errorBody(`no route ${url.pathname}`, 404), { status: 404 });
      }
    },
  });
  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    port: server.port as number,
    stats,
    stop: () => void server.stop(true),
  };
}
