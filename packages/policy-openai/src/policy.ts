import {
  type Action,
  AirError,
  errorMessage,
  type GenerateRequest,
  type Generation,
  type Message,
  type Policy,
  type WeightsRef,
} from "@air/core";
import { hintOf, type PromptCursor, type PromptHint } from "./answer-ids.ts";
import { isContextLengthError } from "./completion.ts";
import { adminUrls, baseUrls, type OpenAIPolicyConfig } from "./config.ts";
import { fitWindow } from "./context-window.ts";
import { detectServer } from "./detect.ts";
import type { PolicyEnvironment } from "./environment.ts";
import { RequestGate } from "./gate.ts";
import { processHistory } from "./history.ts";
import type { ServerInfo } from "./kinds.ts";
import { formatErrorMessage, parseAction } from "./parse/action.ts";
import { ServerPool } from "./pool.ts";
import { readSample } from "./read-sample.ts";
import { chatBody } from "./request-body.ts";
import { statusOf } from "./retry.ts";
import { contextStop, type Sampled, sampleLlama } from "./sample-llama.ts";
import { type ChatBody, InferenceServer } from "./server.ts";
import type { PolicyStats } from "./stats.ts";
import { type TokenizeDeps, tokenizeMessages } from "./tokenize-calls.ts";
import { WeightSync } from "./weight-sync.ts";

/**
 * A policy served by one or several OpenAI-compatible servers (vLLM, prime-rl's server, the tiny server).
 * Captures token ids and logprobs per turn, extracts the command, re-asks on format errors, checks the context
 * window, retries transient failures, bounds concurrency, and updates the servers' weights. With several servers
 * (`base_url` a list) a rollout's requests stay on one server (prefix cache) chosen by load, a failed server is
 * probed until it is back (`ServerPool`), and a weight update returns once every server in rotation serves it.
 * @example
 * const policy = new OpenAIPolicy(openaiPolicyConfig.parse({ base_url: "http://127.0.0.1:8000/v1" }), env);
 * const generation = await policy.generate({ messages, rolloutId: "r0", turnIndex: 0, signal });
 */
export class OpenAIPolicy implements Policy {
  /** The first server (the only one unless `base_url` is a list). */
  readonly server: InferenceServer;
  readonly pool: ServerPool;
  /** The weights the servers serve: version, request model name, updates and readmissions. */
  private readonly weights: WeightSync;
  private readonly baseModel: string;
  private readonly gate: RequestGate;
  /** The gate and pool, for the tokenize calls of a generation. */
  private readonly deps: TokenizeDeps;
  /** Context window from the config; else the server's. */
  private readonly configWindow?: number;
  /** The server's kind and window, found once (a failed detection is retried by the next request). */
  private detected?: Promise<ServerInfo>;

  constructor(
    readonly config: OpenAIPolicyConfig,
    private readonly env: PolicyEnvironment,
  ) {
    const admin = adminUrls(config);
    const servers = baseUrls(config).map((url, i) => new InferenceServer(config, url, admin[i]));
    this.server = servers[0] ?? new InferenceServer(config);
    this.pool = new ServerPool(servers, {
      probeMs: config.server_probe_ms,
      log: env.log,
      signal: env.signal,
      readmit: (member) => this.weights.readmit(member),
    });
    this.baseModel = config.model ?? env.modelName;
    this.weights = new WeightSync(this.pool, config, env, this.baseModel, async () => {
      return (await this.serverInfo(env.signal)).kind;
    });
    this.configWindow = config.max_model_len ?? env.maxModelLen;
    this.gate = new RequestGate(
      {
        maxConcurrent: config.max_concurrent_requests,
        retries: config.max_retries,
        backoffMs: config.retry_backoff_ms,
        backoffMaxMs: config.retry_backoff_max_ms,
      },
      env.log,
    );
    this.deps = { gate: this.gate, pool: this.pool };
  }

  get version(): number {
    return this.weights.version;
  }

  /**
   * The server's kind (`policy.server`, or detected from its routes) and context window. Detection runs once;
   * a failure is not cached.
   */
  async serverInfo(signal: AbortSignal): Promise<ServerInfo> {
    if (this.detected === undefined) {
      const forced = this.config.server;
      const attempt = this.gate.run(
        "server detection",
        () => this.pool.use(undefined, (server) => detectServer(server, forced, this.baseModel, signal)),
        signal,
      );
      this.detected = attempt;
      attempt.then(
        (info) =>
          this.env.log.info(
            `server: ${info.kind} (${info.evidence})${info.contextWindow ? `, context window ${info.contextWindow}` : ""}`,
          ),
        () => {
          if (this.detected === attempt) this.detected = undefined;
        },
      );
    }
    return await this.detected;
  }

  /** Model name sent with chat requests (the LoRA adapter's name once one is loaded). */
  get model(): string {
    return this.weights.model;
  }

  /** Most requests that were in flight at once. */
  get peakConcurrency(): number {
    return this.gate.peak;
  }

  /** Counters since the last call (then zeroed), and the totals. */
  takeStats(): { window: PolicyStats; total: PolicyStats } {
    return { window: this.gate.take(), total: structuredClone(this.gate.total) };
  }

  /**
   * One reply with a command. An unparseable reply is re-asked up to `max_format_retries` times without spending
   * a turn, as MLGym's agent does: the history, the last bad reply, then the format error (the env's
   * `request.formatErrorMessage` verbatim when it gives one, else air's own wording plus a note on how often).
   */
  async generate(request: GenerateRequest): Promise<Generation> {
    const keepFirst = this.config.history.keep_first ?? request.initialMessages ?? 2;
    const history = processHistory(request.messages, { ...this.config.history, keep_first: keepFirst });
    let messages = history;
    let previous: { sampled: Sampled; action: Action; messages: Message[] } | undefined;
    for (let retries = 0; ; retries++) {
      const sampled = await this.sample(messages, request, retries);
      if (sampled.finishReason === "context_length") {
        if (previous === undefined) return this.finish(sampled, { text: "" }, 0, messages);
        this.gate.count((s) => s.parseErrors++);
        const noted = request.formatErrorMessage === undefined ? retries - 1 : 0;
        return this.finish(previous.sampled, previous.action, noted, previous.messages);
      }
      const action = request.parseReply
        ? request.parseReply(sampled.text)
        : this.config.parser === "none"
          ? { text: sampled.text }
          : parseAction(sampled.text);
      if (action.parseError === undefined || retries >= this.config.max_format_retries) {
        if (action.parseError !== undefined) this.gate.count((s) => s.parseErrors++);
        const noted = request.formatErrorMessage === undefined ? retries : 0;
        return this.finish(sampled, action, noted, messages);
      }
      previous = { sampled, action, messages };
      this.gate.count((s) => s.formatRetries++);
      messages = [
        ...history,
        { role: "assistant", content: sampled.text },
        { role: "user", content: request.formatErrorMessage ?? formatErrorMessage(action.parseError) },
      ];
    }
  }

  /**
   * Loads `weights` into every server in rotation at once and resolves when all of them serve it; a server whose
   * load fails leaves the rotation (it gets the latest weights before it is readmitted). Fails when none took it.
   */
  async loadWeights(weights: WeightsRef): Promise<void> {
    await this.weights.load(weights);
  }

  /** The generation of `sampled`; `notedRetries` > 0 adds air's note on how often the reply was re-asked. */
  private finish(sampled: Sampled, action: Action, notedRetries: number, sent: Message[]): Generation {
    this.gate.count((s) => s.generations++);
    if (notedRetries > 0) {
      const note = `Your reply was re-asked ${notedRetries} time(s) after format errors.`;
      action.notes = [...(action.notes ?? []), note];
    }
    const generation: Generation = {
      action,
      promptMessages: sent,
      promptTokenIds: sampled.promptTokenIds,
      completionTokenIds: sampled.completionTokenIds,
      completionLogprobs: sampled.completionLogprobs,
      finishReason: sampled.finishReason,
      policyVersion: sampled.version,
      temperature: this.config.temperature,
    };
    if (sampled.usage) generation.usage = sampled.usage;
    if (sampled.completionMask) generation.completionMask = sampled.completionMask;
    if (sampled.cursor) generation.promptCursor = sampled.cursor;
    return generation;
  }

  /** One sampled reply for `messages`, or a `context_length` stop when they cannot fit. */
  private async sample(messages: Message[], request: GenerateRequest, formatRetry: number): Promise<Sampled> {
    const { signal, rolloutId } = request;
    const version = this.weights.version;
    const info = await this.serverInfo(signal);
    const hint = hintOf(request.previousPrompt);
    const deps = this.deps;
    const limit = this.configWindow ?? info.contextWindow;
    const model = this.weights.model;
    const fit = await fitWindow(deps, {
      limit,
      maxTokens: this.config.max_tokens,
      messages,
      hint,
      info,
      model,
      rolloutId,
      signal,
    });
    if (fit.full) return this.contextStop(fit.promptIds ?? [], version);
    const { maxTokens } = fit;
    const body = chatBody(this.config, { info, model, version, messages, maxTokens, request, formatRetry });
    const needed = this.config.require_token_data && !this.env.evaluationOnly;
    if (info.kind === "llama.cpp" && needed) {
      const promptIds =
        fit.promptIds ?? (await tokenizeMessages(deps, info, model, messages, rolloutId, signal));
      const stop = (ids: number[]) => this.contextStop(ids, version);
      return await sampleLlama(this.gate, this.pool, {
        chat: body,
        promptIds,
        maxTokens,
        request,
        version,
        stop,
      });
    }
    // vLLM and SGLang send the prompt ids back: tokenized ids are not held while the request is in flight.
    const heldIds =
      this.config.return_token_ids && (info.kind === "vllm" || info.kind === "sglang")
        ? undefined
        : fit.promptIds;
    const sent = await this.send(body, request, hint);
    if (sent === "context_length") return this.contextStop(heldIds ?? [], version);
    return await readSample(deps, {
      ...sent,
      info,
      model: this.weights.model,
      messages,
      promptIds: heldIds,
      rolloutId,
      version,
      needed,
      signal,
    });
  }

  /** Sends one chat completion (bounded, retried, on the rollout's server); a context-length 400 is a stop. */
  private async send(
    body: ChatBody,
    request: GenerateRequest,
    hint: PromptHint | undefined,
  ): Promise<{ answer: unknown; cursor?: PromptCursor } | "context_length"> {
    const release = this.weights.using(body.model);
    try {
      return await this.gate.run(
        "chat completion",
        () => this.pool.use(request.rolloutId, (server) => server.chatAnswer(body, request.signal, hint)),
        request.signal,
        true,
      );
    } catch (error) {
      if (statusOf(error) === 400 && isContextLengthError(errorMessage(error))) return "context_length";
      if (error instanceof AirError) throw error;
      throw new AirError("POLICY_FAILED", `chat completion rejected: ${errorMessage(error)}`, {
        plugin: "openai",
        hook: "generate",
        cause: error,
      });
    } finally {
      release();
    }
  }

  private contextStop(promptIds: number[], version: number): Sampled {
    this.gate.count((s) => s.contextLength++);
    return contextStop(promptIds, version);
  }
}
