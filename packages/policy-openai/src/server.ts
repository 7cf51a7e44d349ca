import type { Message } from "@air/core";
import { type PromptCursor, type PromptHint, parseChatAnswer } from "./answer-ids.ts";
import { baseUrls, type OpenAIPolicyConfig } from "./config.ts";
import { HttpStatusError } from "./retry.ts";

/** The body of one chat completion request: OpenAI fields plus the server kind's own (see `kindRequestFields`). */
export interface ChatBody {
  model: string;
  messages: Message[];
  temperature: number;
  top_p: number;
  /** vLLM and OpenAI's current name (`max_tokens` is deprecated there); prime-rl v0.8.0 sends this one too. */
  max_completion_tokens: number;
  n: 1;
  seed?: number;
  [field: string]: unknown;
}

/** vLLM's `/tokenize` answer. */
export interface TokenizeResult {
  tokens: number[];
  count: number;
  max_model_len?: number;
}

/**
 * The routes of an OpenAI-compatible server the policy uses, all with plain fetch (no retries here: the policy
 * retries and counts). Chat completions once went through the `openai` package; that cost ~0.17 ms of CPU per
 * request more than fetch + JSON.parse (measured: 0.23–0.25 vs 0.07–0.08 ms per request, 64 in flight, a
 * 12 KB prompt and a vLLM-sized answer), a third of the orchestrator's CPU per turn. Admin routes (`/tokenize`,
 * `/pause`, `/update_weights`, ...) live at the server root, i.e. `base_url` without `/v1`, as in prime-rl — or
 * at `adminUrl`'s root when a router fronts the engine (prime-rl's `admin_base_url`).
 * One object per server URL (`base_url` may list several; the first is the default).
 * @example const server = new InferenceServer(config); const models = await server.models(signal);
 */
export class InferenceServer {
  readonly baseUrl: string;
  readonly rootUrl: string;
  private readonly chatUrl: string;
  private readonly headers: Record<string, string>;

  constructor(
    private readonly config: OpenAIPolicyConfig,
    baseUrl: string = baseUrls(config)[0] ?? "",
    adminUrl?: string,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    // Behind a router (prime-rl's inference with its vllm-router) the admin routes go to the engine itself.
    this.rootUrl = (adminUrl ?? this.baseUrl).replace(/\/+$/, "").replace(/\/v1$/, "");
    this.chatUrl = `${this.baseUrl}/chat/completions`;
    this.headers = { authorization: `Bearer ${config.api_key}`, "content-type": "application/json" };
  }

  /**
   * One chat completion attempt (`POST <base_url>/chat/completions`); resolves with the parsed JSON answer.
   * A non-2xx answer throws `HttpStatusError` (its message carries the body, e.g. a context-length error); a
   * 2xx answer that is not JSON throws.
   */
  async chat(body: ChatBody, signal: AbortSignal): Promise<unknown> {
    return (await this.chatAnswer(body, signal)).answer;
  }

  /**
   * `chat`, plus the cursor of the answer's prompt-id list; with `hint` (the rollout's previous prompt ids and
   * their cursor) only the ids after that prompt are parsed (`parseChatAnswer`).
   */
  async chatAnswer(
    body: ChatBody,
    signal: AbortSignal,
    hint?: PromptHint,
  ): Promise<{ answer: unknown; cursor?: PromptCursor }> {
    const response = await fetch(this.chatUrl, {
      method: "POST",
      headers: this.headers,
      body: JSON.stringify(body),
      signal: AbortSignal.any([signal, AbortSignal.timeout(this.config.request_timeout_ms)]),
    });
    const text = await response.text();
    if (!response.ok) throw new HttpStatusError(response.status, this.chatUrl, text);
    try {
      return parseChatAnswer(text, hint);
    } catch {
      throw new Error(
        `${this.chatUrl} answered ${response.status} with malformed JSON: ${text.slice(0, 200)}`,
      );
    }
  }

  /** Prompt token ids of `messages` with the generation prompt, as the server's chat template renders it. */
  async tokenizeMessages(model: string, messages: Message[], signal: AbortSignal): Promise<TokenizeResult> {
    const body = { model, messages, add_generation_prompt: true };
    return (await this.postJson(`${this.rootUrl}/tokenize`, body, signal)) as TokenizeResult;
  }

  /** Token ids of plain text (no special tokens). */
  async tokenizeText(model: string, text: string, signal: AbortSignal): Promise<TokenizeResult> {
    const body = { model, prompt: text, add_special_tokens: false };
    return (await this.postJson(`${this.rootUrl}/tokenize`, body, signal)) as TokenizeResult;
  }

  /** llama.cpp: the prompt its chat template renders for `messages` (`POST /apply-template` → `{prompt}`). */
  async applyTemplate(messages: Message[], signal: AbortSignal): Promise<unknown> {
    return await this.postJson(`${this.rootUrl}/apply-template`, { messages }, signal);
  }

  /**
   * llama.cpp's native `POST /completion` (the prompt as token ids): its answer carries the exact completion token
   * ids (`tokens`, with `return_tokens`), which its chat route only gives through logprob entries that merge the
   * tokens of a UTF-8 character split across tokens.
   */
  async llamaCompletion(body: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    return await this.postJson(`${this.rootUrl}/completion`, body, signal);
  }

  /**
   * llama.cpp: token ids of `content` as its server tokenizes a rendered chat prompt (`POST /tokenize
   * {content, add_special: true, parse_special: true}` → `{tokens}`).
   */
  async tokenizeContent(content: string, signal: AbortSignal): Promise<unknown> {
    const body = { content, add_special: true, parse_special: true };
    return await this.postJson(`${this.rootUrl}/tokenize`, body, signal);
  }

  /** `GET` of a route: under `base_url` when it starts with /v1, else at the server root. */
  async getJson(route: string, signal: AbortSignal, timeoutMs?: number): Promise<unknown> {
    const url = route.startsWith("/v1/") ? `${this.baseUrl}${route.slice(3)}` : `${this.rootUrl}${route}`;
    return await this.send("GET", url, undefined, signal, timeoutMs);
  }

  /** `GET /v1/models`. */
  async models(signal: AbortSignal): Promise<Array<{ id: string; max_model_len?: number }>> {
    const answer = (await this.send("GET", `${this.baseUrl}/models`, undefined, signal)) as {
      data?: Array<{ id: string; max_model_len?: number }>;
    };
    return answer.data ?? [];
  }

  /** POST to an admin route at the server root with a per-attempt timeout. */
  async admin(
    path: string,
    body: unknown,
    timeoutMs: number,
    signal: AbortSignal,
    query?: Record<string, string>,
  ): Promise<unknown> {
    const search = query ? `?${new URLSearchParams(query).toString()}` : "";
    return await this.send("POST", `${this.rootUrl}${path}${search}`, body, signal, timeoutMs);
  }

  private async postJson(url: string, body: unknown, signal: AbortSignal): Promise<unknown> {
    return await this.send("POST", url, body, signal);
  }

  private async send(
    method: "GET" | "POST",
    url: string,
    body: unknown,
    signal: AbortSignal,
    timeoutMs = this.config.request_timeout_ms,
  ): Promise<unknown> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.config.api_key}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
    const text = await response.text();
    if (!response.ok) throw new HttpStatusError(response.status, url, text);
    if (text.trim() === "") return {};
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return { text };
    }
  }
}
