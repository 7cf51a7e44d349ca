import { z } from "zod";

const history = z
  .object({
    keep_first: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "messages at the start always sent whole; default: the env's initial messages (system prompt, demonstrations, task), as MLGym keeps them",
      ),
    last_observations: z
      .number()
      .int()
      .min(0)
      .default(5)
      .describe("observations sent whole, counted from the end (MLGym's default is 5); 0 keeps every one"),
    marker: z
      .string()
      .default("Old output omitted ({lines} lines)")
      .describe("replaces an older observation; {lines} is its line count"),
  })
  .strict()
  .prefault({});

const httpUrl = z.url({
  protocol: /^https?$/,
  error: "expected an http(s) URL, e.g. http://127.0.0.1:8000/v1",
});

/** The `[policy]` section of the `openai` policy (without `plugin`). */
export const openaiPolicyConfig = z
  .object({
    base_url: z
      .union([httpUrl, z.array(httpUrl).min(1, "give at least one URL")])
      .default("http://127.0.0.1:8000/v1")
      .describe(
        "OpenAI-compatible base URL, or a list of servers serving the same model (requests go to the least-loaded one, a rollout stays on its server; weight updates go to all); admin routes (/tokenize, /pause, ...) are at each one's root",
      ),
    admin_url: z
      .union([httpUrl, z.array(httpUrl).min(1)])
      .optional()
      .describe(
        "where the admin routes (/pause, /update_weights, /resume, LoRA loads, /tokenize) go when a router fronts the engine (prime-rl's admin_base_url): one URL per base_url, in the same order; default: each base_url's root. The launcher sets it for prime-rl's server with [inference] router = true",
      ),
    server_probe_ms: z
      .number()
      .int()
      .positive()
      .default(2000)
      .describe(
        "a server that failed is out of rotation and probed (GET /v1/models) this often until it answers",
      ),
    api_key: z.string().default("EMPTY").describe("bearer token sent to the server"),
    server: z
      .enum(["auto", "vllm", "sglang", "llama.cpp", "openai"])
      .default("auto")
      .describe(
        "server kind (where token ids/logprobs come from); auto: detected from /v1/models, /props, /get_model_info, /version",
      ),
    model: z.string().optional().describe("served model name (default: [model] name)"),
    temperature: z.number().min(0).default(1).describe("sampling temperature"),
    top_p: z.number().gt(0).max(1).default(1).describe("nucleus sampling"),
    max_tokens: z.number().int().positive().default(1024).describe("completion tokens per turn"),
    seed: z
      .number()
      .int()
      .optional()
      .describe("when set, each request gets a seed derived from it, the rollout id and the turn"),
    request_timeout_ms: z.number().int().positive().default(300_000).describe("timeout of one HTTP request"),
    max_retries: z
      .number()
      .int()
      .min(0)
      .default(3)
      .describe("retries of a request after a 5xx, 408, 429, timeout or connection error"),
    retry_backoff_ms: z
      .number()
      .int()
      .min(0)
      .default(1000)
      .describe("first backoff; doubles per retry, up to retry_backoff_max_ms"),
    retry_backoff_max_ms: z.number().int().min(0).default(10_000).describe("largest backoff between retries"),
    max_concurrent_requests: z
      .number()
      .int()
      .positive()
      .default(64)
      .describe("requests in flight to the server at once"),
    parser: z
      .enum(["mlgym", "none"])
      .default("mlgym")
      .describe("mlgym: one command from a DISCUSSION + ``` reply; none: the whole text is the action"),
    max_format_retries: z
      .number()
      .int()
      .min(0)
      .default(2)
      .describe("re-asks after an unparseable reply, with the format error appended (as MLGym does)"),
    history,
    max_model_len: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("context window; default: max_model_len from GET /v1/models (no check when unknown)"),
    return_token_ids: z
      .boolean()
      .default(true)
      .describe(
        "ask vLLM / SGLang for prompt and completion token ids in the answer (off for servers that reject it)",
      ),
    vllm_extras: z
      .boolean()
      .default(true)
      .describe("vLLM only: also send return_tokens_as_token_ids and a per-version cache_salt"),
    require_token_data: z
      .boolean()
      .default(true)
      .describe(
        "fail a generation whose token ids or logprobs cannot be recovered (needed for training; evaluation runs never require them)",
      ),
    weight_update: z
      .enum(["full", "lora"])
      .default("full")
      .describe(
        "full: POST /pause, /update_weights, /resume (prime-rl server) or SGLang's /update_weights_from_disk; lora: load an adapter",
      ),
    lora_name: z.string().optional().describe("adapter name; generations then request this model name"),
    lora_route: z
      .string()
      .optional()
      .describe(
        "LoRA load route; default by server kind: vLLM /v1/load_lora_adapter, SGLang /load_lora_adapter (each version loaded as <lora_name>-v<version>, the previous one unloaded: /v1/unload_lora_adapter, SGLang /unload_lora_adapter); set /load_lora_adapter for prime-rl's vLLM server (one name, reloaded in place)",
      ),
    admin_timeout_ms: z
      .number()
      .int()
      .positive()
      .default(300_000)
      .describe("per attempt: /pause, /resume, LoRA loads"),
    update_weights_timeout_ms: z
      .number()
      .int()
      .positive()
      .default(720_000)
      .describe("per attempt: /update_weights"),
    admin_max_attempts: z
      .number()
      .int()
      .positive()
      .default(10)
      .describe("attempts of one weight-update call"),
  })
  .strict()
  .refine((c) => c.weight_update !== "lora" || c.lora_name !== undefined, {
    message: 'weight_update = "lora" needs lora_name',
    path: ["lora_name"],
  })
  .refine((c) => c.admin_url === undefined || adminUrls(c).length === baseUrls(c).length, {
    message: "admin_url needs one URL per base_url, in the same order",
    path: ["admin_url"],
  });

export type OpenAIPolicyConfig = z.output<typeof openaiPolicyConfig>;

/**
 * The server URLs of `base_url` (one or a list), without trailing slashes, duplicates dropped.
 * @example baseUrls({ base_url: ["http://a:8000/v1/", "http://b:8000/v1"] }) // ["http://a:8000/v1", "http://b:8000/v1"]
 */
export function baseUrls(config: { base_url: string | string[] }): string[] {
  const list = typeof config.base_url === "string" ? [config.base_url] : config.base_url;
  return [...new Set(list.map((u) => u.replace(/\/+$/, "")))];
}

/**
 * `admin_url` as a list (empty when unset), without trailing slashes.
 * @example adminUrls({ admin_url: "http://e:8100/v1/" }) // ["http://e:8100/v1"]
 */
export function adminUrls(config: { admin_url?: string | string[] }): string[] {
  if (config.admin_url === undefined) return [];
  const list = typeof config.admin_url === "string" ? [config.admin_url] : config.admin_url;
  return list.map((u) => u.replace(/\/+$/, ""));
}

/** The LoRA routes of a server kind and how adapter names are given. */
export interface LoraRoutes {
  load: string;
  unload: string;
  /** versioned: `<lora_name>-v<version>`, the previous one unloaded; in-place: one name reloaded (prime-rl's server). */
  naming: "versioned" | "in-place";
}

/**
 * Where LoRA adapters are loaded, by server kind: stock vLLM serves `/v1/load_lora_adapter` and
 * `/v1/unload_lora_adapter`; SGLang serves `/load_lora_adapter` and `/unload_lora_adapter` at the root (it refuses a
 * name already loaded, so versions get names of their own as on vLLM); prime-rl's vLLM server wraps
 * `/load_lora_adapter` (`lora_route = "/load_lora_adapter"` on a vLLM server), which reloads one name in place.
 * An explicit `lora_route` wins.
 * @example loraRoutes({}, "sglang") // { load: "/load_lora_adapter", unload: "/unload_lora_adapter", naming: "versioned" }
 */
export function loraRoutes(config: { lora_route?: string }, kind: string): LoraRoutes {
  const sglang = kind === "sglang";
  const root = sglang ? "" : "/v1";
  const load = config.lora_route?.replace(/\/+$/, "") ?? `${root}/load_lora_adapter`;
  const inPlace = !sglang && load === "/load_lora_adapter";
  return { load, unload: `${root}/unload_lora_adapter`, naming: inPlace ? "in-place" : "versioned" };
}
