import {
  type Action,
  AirError,
  errorMessage,
  type GenerateRequest,
  type Generation,
  type Logger,
  type Message,
  type Policy,
  type WeightsRef,
} from "@air/core";
import type { PromptCursor, PromptHint } from "./answer-ids.ts";
import { checkTokenData, isContextLengthError, readCompletion } from "./completion.ts";
import { adminUrls, baseUrls, type OpenAIPolicyConfig } from "./config.ts";
import { detectServer } from "./detect.ts";
import { RequestGate } from "./gate.ts";
import { processHistory } from "./history.ts";
import { kindRequestFields, type ServerInfo } from "./kinds.ts";
import { formatErrorMessage, parseAction } from "./parse/action.ts";
import { ServerPool } from "./pool.ts";
import { promptBound } from "./prompt-bound.ts";
import { lacksHint, promptIdsByKind } from "./prompt-ids.ts";
import { statusOf } from "./retry.ts";
import { contextStop, type Sampled, sampleLlama } from "./sample-llama.ts";
import { type ChatBody, InferenceServer } from "./server.ts";
import type { PolicyStats } from "./stats.ts";
import { WeightSync } from "./weight-sync.ts";

/** What the policy needs from the run besides its config. */
export interface PolicyEnvironment {
  modelName: string;
  /** `[model] max_model_len` of the run, used when the policy section sets none. */
  maxModelLen?: number;
  log: Logger;
  /** Aborts weight updates and model lookups when the run stops. */
  signal: AbortSignal;
  /** An evaluation: generations never need token ids or logprobs (only the text). */
  evaluationOnly?: boolean;
}

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
    const { signal } = request;
    const version = this.weights.version;
    const info = await this.serverInfo(signal);
    let maxTokens = this.config.max_tokens;
    let promptIds: number[] | undefined;
    const limit = this.configWindow ?? info.contextWindow;
    const hint = hintOf(request.previousPrompt);
    if (limit !== undefined && promptBound(messages, hint) + maxTokens > limit) {
      promptIds = await this.tokenizeMessages(info, messages, request.rolloutId, signal);
      if (promptIds !== undefined) {
        if (promptIds.length >= limit) return this.contextStop(promptIds, version);
        if (promptIds.length + maxTokens > limit) {
          maxTokens = limit - promptIds.length;
          this.gate.count((s) => s.maxTokensClamped++);
        }
      }
    }
    if (info.kind === "llama.cpp" && this.config.require_token_data && !this.env.evaluationOnly) {
      const ids =
        promptIds ?? (await this.tokenizeMessages(info, messages, request.rolloutId, request.signal));
      const chat = this.chatBody(info, messages, maxTokens, request, formatRetry);
      const stop = (ids: number[]) => this.contextStop(ids, version);
      return await sampleLlama(this.gate, this.pool, {
        chat,
        promptIds: ids,
        maxTokens,
        request,
        version,
        stop,
      });
    }
    // vLLM and SGLang send the prompt ids back: tokenized ids are not held while the request is in flight.
    if (this.config.return_token_ids && (info.kind === "vllm" || info.kind === "sglang"))
      promptIds = undefined;
    const body = this.chatBody(info, messages, maxTokens, request, formatRetry);
    let answer: unknown;
    let cursor: PromptCursor | undefined;
    const model = body.model;
    const release = this.weights.using(model);
    try {
      ({ answer, cursor } = await this.gate.run(
        "chat completion",
        () => this.pool.use(request.rolloutId, (server) => server.chatAnswer(body, signal, hint)),
        signal,
        true,
      ));
    } catch (error) {
      if (statusOf(error) === 400 && isContextLengthError(errorMessage(error))) {
        return this.contextStop(promptIds ?? [], version);
      }
      if (error instanceof AirError) throw error;
      throw new AirError("POLICY_FAILED", `chat completion rejected: ${errorMessage(error)}`, {
        plugin: "openai",
        hook: "generate",
        cause: error,
      });
    } finally {
      release();
    }
    const read = readCompletion(answer);
    const needed = this.config.require_token_data && !this.env.evaluationOnly;
    if (!needed && info.kind === "openai") {
      return {
        text: read.text,
        finishReason: read.finishReason,
        ...checkTokenData(read.promptTokenIds ?? [], read.completionTokenIds ?? [], read.logprobs ?? []),
        version,
        usage: read.usage,
      };
    }
    promptIds =
      read.promptTokenIds ??
      promptIds ??
      (await this.tokenizeMessages(info, messages, request.rolloutId, signal));
    let completionIds = read.completionTokenIds;
    if (completionIds === undefined && read.text !== "" && info.kind === "vllm") {
      const ids = await this.tokenize(
        () =>
          this.pool.use(request.rolloutId, (server) =>
            server.tokenizeText(this.weights.model, read.text, signal),
          ),
        signal,
      );
      if (ids !== undefined && ids.length === read.logprobs?.length) completionIds = ids;
    }
    if (read.text === "" && completionIds === undefined) completionIds = [];
    const data = checkTokenData(promptIds, completionIds, read.logprobs, read.usage);
    if (data.problems.length > 0 && needed) {
      throw new AirError(
        "POLICY_FAILED",
        `the ${info.kind} server's answer lacks training data: ${data.problems.join("; ")} (${lacksHint(info.kind)})`,
        { plugin: "openai", hook: "generate" },
      );
    }
    const sampled: Sampled = {
      text: read.text,
      finishReason: read.finishReason,
      ...data,
      version,
      usage: read.usage,
    };
    if (
      cursor !== undefined &&
      read.promptTokenIds !== undefined &&
      cursor.count === data.promptTokenIds.length
    )
      sampled.cursor = { ...cursor, messages: messages.length, lastMessage: messages.at(-1) };
    return sampled;
  }

  private contextStop(promptIds: number[], version: number): Sampled {
    this.gate.count((s) => s.contextLength++);
    return contextStop(promptIds, version);
  }

  private chatBody(
    info: ServerInfo,
    messages: Message[],
    maxTokens: number,
    request: GenerateRequest,
    formatRetry: number,
  ): ChatBody {
    const body: ChatBody = {
      model: this.weights.model,
      messages,
      temperature: this.config.temperature,
      top_p: this.config.top_p,
      max_completion_tokens: maxTokens,
      n: 1,
      ...kindRequestFields(info.kind, {
        returnTokenIds: this.config.return_token_ids,
        vllmExtras: this.config.vllm_extras,
        version: this.weights.version,
      }),
    };
    if (this.config.seed !== undefined) {
      body.seed = requestSeed(this.config.seed, request.rolloutId, request.turnIndex, formatRetry);
    }
    return body;
  }

  private async tokenizeMessages(
    info: ServerInfo,
    messages: Message[],
    key: string,
    signal: AbortSignal,
  ): Promise<number[] | undefined> {
    this.gate.count((s) => s.tokenizeCalls++);
    try {
      return await this.gate.run(
        "prompt tokenization",
        () =>
          this.pool.use(key, (server) =>
            promptIdsByKind(server, info.kind, this.weights.model, messages, signal),
          ),
        signal,
      );
    } catch (error) {
      const status = statusOf(error);
      if (status === 404 || status === 400) return undefined;
      throw error;
    }
  }

  /** Token ids through /tokenize; undefined when the server has no such route or answers without tokens. */
  private async tokenize(
    work: () => Promise<{ tokens?: unknown }>,
    signal: AbortSignal,
  ): Promise<number[] | undefined> {
    this.gate.count((s) => s.tokenizeCalls++);
    try {
      const tokens = (await this.gate.run("POST /tokenize", work, signal)).tokens;
      return Array.isArray(tokens) && tokens.every((t) => typeof t === "number") ? tokens : undefined;
    } catch (error) {
      const status = statusOf(error);
      if (status === 404 || status === 400) return undefined;
      throw error;
    }
  }
}

/** The request's previous prompt as a hint for reading the answer, when its cursor is one this policy made. */
function hintOf(previous: GenerateRequest["previousPrompt"]): PromptHint | undefined {
  const c = previous?.cursor as Partial<PromptCursor> | undefined;
  if (previous === undefined || typeof c?.textLength !== "number" || typeof c.count !== "number")
    return undefined;
  if (typeof c.hash !== "bigint" && typeof c.hash !== "number") return undefined;
  return { ids: previous.ids, cursor: c as PromptCursor };
}

/** A 31-bit seed from the run seed, rollout, turn and re-ask, so rollouts of one group still differ. */
function requestSeed(seed: number, rolloutId: string, turnIndex: number, formatRetry: number): number {
  let h = (seed ^ 0x811c9dc5) >>> 0;
  for (const ch of `${rolloutId}:${turnIndex}:${formatRetry}`) {
    h = Math.imul(h ^ (ch.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  }
  return h & 0x7fffffff;
}
