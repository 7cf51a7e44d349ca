import type { Message } from "@air/core";
import OpenAI from "openai";
import type { OpenAIPolicyConfig } from "./config.ts";
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
 * The routes of an OpenAI-compatible server the policy uses: chat completions through the `openai` package
 * (its own retries off: the policy retries and counts), the rest with fetch. Admin routes (`/tokenize`,
 * `/pause`, `/update_weights`, ...) live at the server root, i.e. `base_url` without `/v1`, as in prime-rl.
 * @example const server = new InferenceServer(config); const models = await server.models(signal);
 */
export class InferenceServer {
  readonly baseUrl: string;
  readonly rootUrl: string;
  private readonly client: OpenAI;

  constructor(private readonly config: OpenAIPolicyConfig) {
    this.baseUrl = config.base_url.replace(/\/+$/, "");
    this.rootUrl = this.baseUrl.replace(/\/v1$/, "");
    this.client = new OpenAI({
      baseURL: this.baseUrl,
      apiKey: config.api_key,
      maxRetries: 0,
      timeout: config.request_timeout_ms,
    });
  }

  /** One chat completion attempt; resolves with the raw JSON answer. */
  async chat(body: ChatBody, signal: AbortSignal): Promise<unknown> {
    const params = body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
    return await this.client.chat.completions.create(params, {
      signal,
      timeout: this.config.request_timeout_ms,
      maxRetries: 0,
    });
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
