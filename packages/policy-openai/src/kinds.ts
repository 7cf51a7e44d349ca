/**
 * The inference servers the policy knows, and how each one tells its token data. Facts per server (field names,
 * routes, error shapes) were read from each server's source at the versions pinned in the package README.
 */

/** A server kind: where token ids and logprobs come from, which tokenize route and errors it has. */
export type ServerKind = "vllm" | "sglang" | "llama.cpp" | "openai";

export const SERVER_KINDS: readonly ServerKind[] = ["vllm", "sglang", "llama.cpp", "openai"];

/** What the server told about itself while being detected. */
export interface ServerInfo {
  kind: ServerKind;
  /** Context window the server reports (vLLM/SGLang `max_model_len`, llama.cpp `n_ctx`). */
  contextWindow?: number;
  /** How the kind was found, for logs and `rl check`. */
  evidence: string;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

/**
 * The kind a `GET /v1/models` answer names, with the context window it reports. vLLM and SGLang set
 * `owned_by` ("vllm", "sglang") and `max_model_len` on each model card; llama.cpp's server sets
 * `owned_by: "llamacpp"` and `meta.n_ctx`. A card with `max_model_len` but another owner (air's tiny server,
 * prime-rl's wrapper) speaks vLLM's protocol.
 * @example kindFromModels({ data: [{ id: "m", owned_by: "llamacpp", meta: { n_ctx: 512 } }] })?.kind // "llama.cpp"
 */
export function kindFromModels(answer: unknown, model?: string): ServerInfo | undefined {
  if (!isObject(answer) || !Array.isArray(answer.data)) return undefined;
  const cards = answer.data.filter(isObject);
  const card = cards.find((c) => c.id === model) ?? cards[0];
  if (card === undefined) return undefined;
  const owner = typeof card.owned_by === "string" ? card.owned_by : "";
  const maxModelLen = positive(card.max_model_len);
  const meta = isObject(card.meta) ? card.meta : {};
  const info = (kind: ServerKind, contextWindow?: number): ServerInfo => ({
    kind,
    ...(contextWindow === undefined ? {} : { contextWindow }),
    evidence: `GET /v1/models owned_by "${owner}"`,
  });
  if (owner === "llamacpp") return info("llama.cpp", positive(meta.n_ctx));
  if (owner === "sglang") return info("sglang", maxModelLen);
  if (owner === "vllm") return info("vllm", maxModelLen);
  if (maxModelLen !== undefined) return info("vllm", maxModelLen);
  return undefined;
}

/**
 * The kind a server-specific info route names: llama.cpp's `GET /props` (`default_generation_settings`,
 * `build_info`), SGLang's `GET /get_model_info` (`model_path`), vLLM's `GET /version` (`version`).
 * @example kindFromInfoRoute("/props", { build_info: "b11669", default_generation_settings: { n_ctx: 512 } })
 */
export function kindFromInfoRoute(route: string, answer: unknown): ServerInfo | undefined {
  if (!isObject(answer)) return undefined;
  if (route === "/props" && (isObject(answer.default_generation_settings) || "build_info" in answer)) {
    const settings = isObject(answer.default_generation_settings) ? answer.default_generation_settings : {};
    const contextWindow = positive(settings.n_ctx);
    return {
      kind: "llama.cpp",
      ...(contextWindow === undefined ? {} : { contextWindow }),
      evidence: `GET /props build_info "${String(answer.build_info ?? "")}"`,
    };
  }
  if (route === "/get_model_info" && typeof answer.model_path === "string") {
    return { kind: "sglang", evidence: "GET /get_model_info model_path" };
  }
  if (route === "/version" && typeof answer.version === "string") {
    return { kind: "vllm", evidence: `GET /version ${answer.version}` };
  }
  return undefined;
}

/** Routes probed after `/v1/models`, in order (relative to the server root). */
export const INFO_ROUTES = ["/props", "/get_model_info", "/version"] as const;

/**
 * Request fields per kind, so the sampled distribution is the one the returned logprobs describe and the
 * answer carries token ids:
 * - vLLM: `return_token_ids` (prompt + completion ids), `top_logprobs: 0` (the sampled token's logprob only),
 *   `top_k: -1`, `min_p: 0` (vLLM otherwise takes the model's generation_config.json defaults), optional
 *   `return_tokens_as_token_ids` and a per-version `cache_salt`.
 * - SGLang: `return_prompt_token_ids`, `return_token_ids`, `top_k: -1`, `min_p: 0` (SGLang also falls back to
 *   the model's generation config).
 * - llama.cpp: `top_logprobs: 1` (with 0 it returns no logprobs at all), `post_sampling_probs: true` (the
 *   probability under the distribution actually sampled from, temperature included), and its default
 *   truncations switched off: `top_k: 0` (default 40), `min_p: 0` (default 0.05), `typical_p: 1`,
 *   `top_n_sigma: -1`, `xtc_probability: 0`, `repeat_penalty: 1`, `dry_multiplier: 0`, `mirostat: 0`.
 * - openai (hosted): nothing extra, no logprobs (evaluation only).
 * @example kindRequestFields("llama.cpp", { returnTokenIds: true, vllmExtras: true, version: 0 }).top_logprobs // 1
 */
export function kindRequestFields(
  kind: ServerKind,
  options: { returnTokenIds: boolean; vllmExtras: boolean; version: number },
): Json {
  switch (kind) {
    case "vllm": {
      const fields: Json = { logprobs: true, top_logprobs: 0, top_k: -1, min_p: 0 };
      if (options.returnTokenIds) fields.return_token_ids = true;
      if (options.vllmExtras) {
        fields.return_tokens_as_token_ids = true;
        fields.cache_salt = `v${options.version}`;
      }
      return fields;
    }
    case "sglang": {
      const fields: Json = { logprobs: true, top_logprobs: 0, top_k: -1, min_p: 0 };
      if (options.returnTokenIds) {
        fields.return_prompt_token_ids = true;
        fields.return_token_ids = true;
      }
      return fields;
    }
    case "llama.cpp":
      return {
        logprobs: true,
        top_logprobs: 1,
        post_sampling_probs: true,
        top_k: 0,
        min_p: 0,
        typical_p: 1,
        top_n_sigma: -1,
        xtc_probability: 0,
        repeat_penalty: 1,
        dry_multiplier: 0,
        mirostat: 0,
      };
    case "openai":
      return {};
  }
}

/**
 * True when a 400 answer is the server's "prompt does not fit the context window" error: vLLM ("maximum context
 * length", "longer than the maximum model length"), SGLang ("is longer than the model's context length"),
 * llama.cpp (`type: "exceed_context_size_error"`, "exceeds the available context size"), OpenAI
 * (`context_length_exceeded`).
 * @example isContextLengthError("request (1223 tokens) exceeds the available context size (512 tokens), try increasing it") // true
 */
export function isContextLengthError(message: string): boolean {
  return /maximum context length|context_length_exceeded|longer than the maximum model length|max_model_len|longer than the model's context length|exceed_context_size_error|exceeds the available context size/i.test(
    message,
  );
}

/**
 * The `model` a generation sends to be served by LoRA adapter `adapter`. vLLM serves an adapter under its own name;
 * SGLang selects it from `"<served model>:<adapter>"` (`OpenAIServingBase._parse_model_parameter`, first colon,
 * parts trimmed; `_resolve_lora_path` prefers it to a `lora_path` field) and answers a bare adapter name 404
 * ("Model '…' is not served.") — older SGLang served the base model for it. Versions read: package README.
 * @example requestModel("sglang", "Qwen/Qwen3-4B", "air-lora-v3") // "Qwen/Qwen3-4B:air-lora-v3"
 */
export function requestModel(kind: ServerKind, baseModel: string, adapter: string): string {
  return kind === "sglang" ? `${baseModel}:${adapter}` : adapter;
}
