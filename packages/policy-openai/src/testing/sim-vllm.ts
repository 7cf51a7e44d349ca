import type { Server } from "bun";
import { byteTokenizer, fakeLogprob, type SimTokenizer } from "./tokenizers.ts";
import type { Fault, RecordedRequest, SimVllmOptions, SimVllmStats } from "./types.ts";

export type { RecordedRequest, SimVllmOptions, SimVllmStats } from "./types.ts";

/**
 * The one simulated vLLM server (with prime-rl's admin routes), for tests and benchmarks: real HTTP on
 * 127.0.0.1, vLLM's routes, JSON shapes and error messages. Not a model: replies come from `reply`; token ids
 * from `tokenizer`. It can omit the id fields like an older vLLM, inject 5xx answers or hangs (`failNext`), hold
 * requests (`gated`, `release`), go down (`down`), take `latencyMs` per answer, and count what it served (`stats`).
 * @example
 * const server = new SimVllm({ reply: () => "DISCUSSION\n```\nls\n```" });
 * const config = openaiPolicyConfig.parse({ base_url: server.baseUrl }); // …; server.stop();
 */
export class SimVllm {
  readonly requests: RecordedRequest[] = [];
  readonly stats: SimVllmStats = {
    chatRequests: 0,
    tokenizeRequests: 0,
    inFlight: 0,
    peakInFlight: 0,
    adminRequests: 0,
  };
  private chatCount = 0;
  private readonly tokenizer: SimTokenizer;
  private readonly faults = new Map<string, Fault[]>();
  private readonly waiting: Array<() => void> = [];
  private gateOpen: boolean;
  private readonly served: Set<string>;
  /** LoRA adapters loaded now. */
  readonly adapters = new Set<string>();
  /** When true every request answers 503 (a broken engine behind its HTTP server). */
  down = false;
  private readonly server: Server<undefined>;

  constructor(private readonly options: SimVllmOptions = {}) {
    this.gateOpen = !options.gated;
    this.served = new Set([options.model ?? "tiny"]);
    this.tokenizer = options.tokenizer ?? byteTokenizer;
    this.server = Bun.serve({
      hostname: "127.0.0.1",
      port: options.port ?? 0,
      idleTimeout: 0,
      fetch: (req) => this.handle(req),
    });
  }

  /** Requests in flight now, and the most at once. */
  get inFlight(): number {
    return this.stats.inFlight;
  }

  get peakInFlight(): number {
    return this.stats.peakInFlight;
  }

  /** The port it listens on. */
  get port(): number {
    return this.server.port as number;
  }

  /** `http://127.0.0.1:<port>/v1` */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.server.port}/v1`;
  }

  /** Paths of recorded requests, in arrival order. */
  paths(): string[] {
    return this.requests.map((r) => r.path);
  }

  /** The next `count` requests to `path` fail with `status`, or hang for `hangMs` before answering. */
  failNext(path: string, count: number, fault: Fault): void {
    const list = this.faults.get(path) ?? [];
    for (let i = 0; i < count; i++) list.push(fault);
    this.faults.set(path, list);
  }

  /** Lets held chat requests through (and every later one). */
  release(): void {
    this.gateOpen = true;
    for (const go of this.waiting.splice(0)) go();
  }

  stop(): void {
    this.release();
    this.server.stop(true);
  }

  private async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const text = req.method === "POST" ? await req.text() : "";
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
    if (this.options.record !== false)
      this.requests.push({
        method: req.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        body,
      });
    if (this.down) return Response.json(errorBody("engine is dead", 503), { status: 503 });
    const fault = this.faults.get(url.pathname)?.shift();
    if (fault && "hangMs" in fault) await Bun.sleep(fault.hangMs);
    if (fault && "status" in fault) return Response.json(errorBody("injected failure", fault.status), fault);
    switch (url.pathname) {
      case "/health":
        return new Response(null, { status: 200 });
      case "/sim/stats":
        return Response.json(this.stats);
      case "/sim/reset":
        Object.assign(this.stats, { chatRequests: 0, tokenizeRequests: 0, adminRequests: 0 });
        this.stats.peakInFlight = this.stats.inFlight;
        return Response.json(this.stats);
      case "/v1/models":
        return Response.json({ object: "list", data: [...this.served].map((id) => this.modelCard(id)) });
      case "/tokenize":
        this.stats.tokenizeRequests++;
        return Response.json(this.tokenize(body ?? {}));
      case "/v1/chat/completions":
        return await this.chat(body ?? {});
      case "/pause":
      case "/resume":
      case "/update_weights":
        this.stats.adminRequests++;
        return Response.json({ status: "ok" });
      case "/v1/load_lora_adapter":
      case "/load_lora_adapter":
        return this.loadLora(url.pathname, body ?? {});
      case "/v1/unload_lora_adapter":
        return this.unloadLora(body ?? {});
      default:
        return Response.json(errorBody(`no route ${url.pathname}`, 404), { status: 404 });
    }
  }

  /**
   * Stock vLLM (`OpenAIServingModels.load_lora_adapter`): a name already loaded is refused with a 400 unless
   * `load_inplace`; prime-rl's `/load_lora_adapter` reloads in place.
   */
  private loadLora(path: string, body: Record<string, unknown>): Response {
    const name = String(body.lora_name ?? "");
    if (!name || !body.lora_path) {
      return Response.json(errorBody("Both 'lora_name' and 'lora_path' must be provided.", 400), {
        status: 400,
      });
    }
    if (path === "/v1/load_lora_adapter" && body.load_inplace !== true && this.adapters.has(name)) {
      const message = `The lora adapter '${name}' has already been loaded. If you want to load the adapter in place, set 'load_inplace' to True.`;
      return Response.json(errorBody(message, 400), { status: 400 });
    }
    this.adapters.add(name);
    this.served.add(name);
    return new Response(`Success: LoRA adapter '${name}' added successfully.`);
  }

  /** Stock vLLM: an unknown name is a 404. */
  private unloadLora(body: Record<string, unknown>): Response {
    const name = String(body.lora_name ?? "");
    if (!this.adapters.has(name)) {
      return Response.json(errorBody(`The lora adapter '${name}' cannot be found.`, 404), { status: 404 });
    }
    this.adapters.delete(name);
    this.served.delete(name);
    return new Response(`Success: LoRA adapter '${name}' removed successfully.`);
  }

  private modelCard(id: string) {
    const card: Record<string, unknown> = { id, object: "model", owned_by: "vllm" };
    if (this.options.reportMaxModelLen !== false) card.max_model_len = this.options.maxModelLen ?? 4096;
    return card;
  }

  private tokenize(body: Record<string, unknown>) {
    const tokens = Array.isArray(body.messages)
      ? this.tokenizer.render(chatMessages(body.messages), body.add_generation_prompt !== false)
      : this.tokenizer.encode(String(body.prompt ?? ""));
    return {
      count: tokens.length,
      max_model_len: this.options.maxModelLen ?? 4096,
      tokens,
      token_strs: null,
    };
  }

  private async chat(body: Record<string, unknown>): Promise<Response> {
    const model = String(body.model);
    if (!this.served.has(model)) {
      return Response.json(errorBody(`The model \`${model}\` does not exist.`, 404), { status: 404 });
    }
    const prompt = this.tokenizer.render(chatMessages(body.messages), true);
    const maxTokens = Number(body.max_completion_tokens ?? body.max_tokens ?? 16);
    const limit = this.options.maxModelLen ?? 4096;
    if (prompt.length + maxTokens > limit) {
      const message =
        `This model's maximum context length is ${limit} tokens. However, you requested ` +
        `${prompt.length + maxTokens} tokens (${prompt.length} in the messages, ${maxTokens} in the completion). ` +
        "Please reduce the length of the messages or completion.";
      return Response.json(errorBody(message, 400), { status: 400 });
    }
    const stats = this.stats;
    stats.chatRequests++;
    stats.inFlight++;
    stats.peakInFlight = Math.max(stats.peakInFlight, stats.inFlight);
    try {
      if (!this.gateOpen) await new Promise<void>((go) => this.waiting.push(go));
      const latency = this.options.latencyMs?.() ?? 0;
      if (latency > 0) await Bun.sleep(latency);
      const index = this.chatCount++;
      let text = this.options.reply?.(body, index) ?? `reply ${index}`;
      let completion = this.tokenizer.encode(text);
      let finishReason = "stop";
      if (completion.length > maxTokens) {
        completion = completion.slice(0, maxTokens);
        text = this.tokenizer.prefix(text, maxTokens);
        finishReason = "length";
      }
      return Response.json(this.chatAnswer(body, prompt, completion, text, finishReason));
    } finally {
      stats.inFlight--;
    }
  }

  private chatAnswer(
    body: Record<string, unknown>,
    prompt: number[],
    completion: number[],
    text: string,
    finishReason: string,
  ) {
    const withIds = this.options.tokenIds !== false && body.return_token_ids === true;
    const asIds = this.options.tokensAsIds !== false && body.return_tokens_as_token_ids === true;
    const content = completion.map((id) => ({
      token: asIds ? `token_id:${id}` : String.fromCharCode(id),
      logprob: fakeLogprob(id),
      bytes: [id],
      top_logprobs: [],
    }));
    return {
      id: `chatcmpl-${this.chatCount}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: text },
          logprobs: body.logprobs === true && !this.options.noLogprobs ? { content } : null,
          finish_reason: finishReason,
          stop_reason: null,
          token_ids: withIds ? completion : null,
        },
      ],
      usage: {
        prompt_tokens: prompt.length,
        completion_tokens: completion.length,
        total_tokens: prompt.length + completion.length,
      },
      prompt_logprobs: null,
      prompt_token_ids: withIds ? prompt : null,
    };
  }
}

function errorBody(message: string, code: number) {
  return { error: { message, type: code === 404 ? "NotFoundError" : "BadRequestError", param: null, code } };
}

/** A request's `messages` as the tokenizer reads them: each entry's role and text content (none when absent). */
function chatMessages(value: unknown): Array<{ role: string; content: string }> {
  if (!Array.isArray(value)) return [];
  return value.map((m: { role?: unknown; content?: unknown }) => ({
    role: String(m?.role ?? ""),
    content: typeof m?.content === "string" ? m.content : "",
  }));
}
