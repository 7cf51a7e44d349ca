import type { Server } from "bun";

/**
 * A stand-in for vLLM (with prime-rl's admin routes) for tests: real HTTP on 127.0.0.1, the same routes and
 * JSON shapes. Its "tokenizer" is UTF-8 bytes of a fixed chat template, so token ids are checkable by hand.
 * Not a model: replies come from `reply`.
 */
export interface FakeServerOptions {
  model?: string;
  maxModelLen?: number;
  /** Report max_model_len in GET /v1/models (vLLM does). */
  reportMaxModelLen?: boolean;
  /** Completion text for the n-th chat request. */
  reply?: (body: Record<string, unknown>, index: number) => string;
  /** Honour `return_token_ids` (vLLM ≥ 0.10.2); false acts like an older server. */
  tokenIds?: boolean;
  /** Honour `return_tokens_as_token_ids` in logprob tokens. */
  tokensAsIds?: boolean;
  /** Ignore `logprobs: true` (like a server without logprob support). */
  noLogprobs?: boolean;
  /** Hold every chat request until `release()`. */
  gated?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: Record<string, unknown> | undefined;
}

type Fault = { status: number } | { hangMs: number };

const encoder = new TextEncoder();

/** The fake's chat template, rendered. */
export function renderPrompt(
  messages: Array<{ role: string; content: string }>,
  generationPrompt = true,
): string {
  const turns = messages.map((m) => `<|${m.role}|>${m.content}<|end|>`).join("");
  return generationPrompt ? `${turns}<|assistant|>` : turns;
}

/** The fake's tokenizer: UTF-8 bytes. */
export function fakeTokens(text: string): number[] {
  return [...encoder.encode(text)];
}

/** The fake's logprob of a sampled token. */
export function fakeLogprob(tokenId: number): number {
  return -((tokenId % 13) / 10) - 0.05;
}

export class FakeServer {
  readonly requests: RecordedRequest[] = [];
  inFlight = 0;
  peakInFlight = 0;
  private chatCount = 0;
  private readonly faults = new Map<string, Fault[]>();
  private readonly waiting: Array<() => void> = [];
  private gateOpen: boolean;
  private readonly served: Set<string>;
  /** LoRA adapters loaded now. */
  readonly adapters = new Set<string>();
  /** When true every request answers 503 (a broken engine behind its HTTP server). */
  down = false;
  private readonly server: Server<undefined>;

  constructor(private readonly options: FakeServerOptions = {}) {
    this.gateOpen = !options.gated;
    this.served = new Set([options.model ?? "tiny"]);
    this.server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => this.handle(req) });
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
      case "/v1/models":
        return Response.json({ object: "list", data: [...this.served].map((id) => this.modelCard(id)) });
      case "/tokenize":
        return Response.json(this.tokenize(body ?? {}));
      case "/v1/chat/completions":
        return await this.chat(body ?? {});
      case "/pause":
      case "/resume":
      case "/update_weights":
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
      ? fakeTokens(renderPrompt(body.messages as never, body.add_generation_prompt !== false))
      : fakeTokens(String(body.prompt ?? ""));
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
    const prompt = fakeTokens(renderPrompt(body.messages as never));
    const maxTokens = Number(body.max_completion_tokens ?? body.max_tokens ?? 16);
    const limit = this.options.maxModelLen ?? 4096;
    if (prompt.length + maxTokens > limit) {
      const message =
        `This model's maximum context length is ${limit} tokens. However, you requested ` +
        `${prompt.length + maxTokens} tokens (${prompt.length} in the messages, ${maxTokens} in the completion). ` +
        "Please reduce the length of the messages or completion.";
      return Response.json(errorBody(message, 400), { status: 400 });
    }
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    try {
      if (!this.gateOpen) await new Promise<void>((go) => this.waiting.push(go));
      const index = this.chatCount++;
      let completion = fakeTokens(this.options.reply?.(body, index) ?? `reply ${index}`);
      let finishReason = "stop";
      if (completion.length > maxTokens) {
        completion = completion.slice(0, maxTokens);
        finishReason = "length";
      }
      return Response.json(this.chatAnswer(body, prompt, completion, finishReason));
    } finally {
      this.inFlight--;
    }
  }

  private chatAnswer(
    body: Record<string, unknown>,
    prompt: number[],
    completion: number[],
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
          message: { role: "assistant", content: new TextDecoder().decode(new Uint8Array(completion)) },
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
