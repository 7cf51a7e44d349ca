import { AirError, errorMessage, type WeightsRef } from "@air/core";
import { loraRoutes, type OpenAIPolicyConfig } from "./config.ts";
import type { PolicyEnvironment } from "./environment.ts";
import type { ServerKind } from "./kinds.ts";
import { isTransient, statusOf, withRetries } from "./retry.ts";
import type { InferenceServer } from "./server.ts";

/**
 * Tells one inference server to use new weights, as prime-rl v0.8.0's client does. Full weights:
 * `POST /pause?mode=keep&clear_cache=false`, `POST /update_weights {"weight_dir"}`, and always `POST /resume`
 * (also when the update failed); SGLang: `POST /update_weights_from_disk`. LoRA on stock vLLM
 * (`loraRoutes` naming "versioned"; SGLang the same at `/load_lora_adapter`): `POST /v1/load_lora_adapter {"lora_name": "<lora_name>-v<version>", "lora_path"}`
 * — a new name per version, never `load_inplace` (vLLM keeps that flag on the request and reloads the adapter from
 * disk at every scheduler step); the caller unloads the previous name (`unloadAdapter`). LoRA on prime-rl's
 * server ("in-place"): `POST /load_lora_adapter {"lora_name", "lora_path"}`, one name (its wrapper reloads in
 * place). LoRA loads are retried on 404 (files not visible yet) and 5xx; every call on transient errors.
 * Resolves with the model name later requests must use (the adapter's name for LoRA).
 * @example await loadWeights(server, config, { version: 3, path: "/run/broadcasts/step_3", kind: "full" }, env);
 */
export async function loadWeights(
  server: InferenceServer,
  config: OpenAIPolicyConfig,
  weights: WeightsRef,
  env: PolicyEnvironment,
  serverKind: ServerKind = "vllm",
): Promise<string | undefined> {
  const kind = weights.kind ?? config.weight_update;
  const path = weights.path;
  if (path === undefined) {
    throw new AirError("POLICY_FAILED", `weights v${weights.version} name no directory to load`, {
      plugin: "openai",
      hook: "loadWeights",
    });
  }
  const post = (
    route: string,
    body: unknown,
    timeoutMs: number,
    retryable: (e: unknown) => boolean,
    query?: Record<string, string>,
  ) =>
    withRetries(() => server.admin(route, body, timeoutMs, env.signal, query), {
      retries: config.admin_max_attempts - 1,
      backoffMs: config.retry_backoff_ms,
      backoffMaxMs: config.retry_backoff_max_ms,
      signal: env.signal,
      retryable,
      onRetry: (error, attempt) => env.log.warn(`${route}: retry ${attempt} after ${errorMessage(error)}`),
    }).catch((error: unknown) => {
      throw new AirError(
        "POLICY_FAILED",
        `${route} failed for weights v${weights.version}: ${errorMessage(error)}`,
        {
          plugin: "openai",
          hook: "loadWeights",
          cause: error,
        },
      );
    });
  if (kind === "lora") {
    const name = config.lora_name;
    if (name === undefined) {
      throw new AirError("POLICY_FAILED", "LoRA weights need lora_name in [policy]", {
        plugin: "openai",
        hook: "loadWeights",
      });
    }
    const loraRetryable = (e: unknown) => statusOf(e) === 404 || isTransient(e);
    const adapter = adapterName(config, name, weights.version, serverKind);
    await post(
      loraRoutes(config, serverKind).load,
      { lora_name: adapter, lora_path: path },
      config.admin_timeout_ms,
      (e) => {
        // a retry of a load whose answer was lost: vLLM says the name is loaded already
        if (statusOf(e) === 400 && /already been loaded/.test(errorMessage(e))) return false;
        return loraRetryable(e);
      },
    ).catch((error: unknown) => {
      if (/already been loaded/.test(errorMessage(error))) return undefined;
      throw error;
    });
    env.log.debug(`loaded LoRA adapter ${adapter} (v${weights.version}) from ${path} on ${server.baseUrl}`);
    return adapter;
  }
  if (serverKind === "sglang") {
    // SGLang: POST /update_weights_from_disk {model_path, weight_version} → {success, message}.
    const answer = (await post(
      "/update_weights_from_disk",
      { model_path: path, weight_version: String(weights.version) },
      config.update_weights_timeout_ms,
      isTransient,
    )) as { success?: unknown; message?: unknown };
    if (answer.success !== true) {
      throw new AirError(
        "POLICY_FAILED",
        `SGLang refused weights v${weights.version} from ${path}: ${String(answer.message ?? "no message")}`,
        { plugin: "openai", hook: "loadWeights" },
      );
    }
    env.log.debug(`SGLang loaded weights v${weights.version} from ${path}`);
    return undefined;
  }
  if (serverKind === "llama.cpp" || serverKind === "openai") {
    throw new AirError(
      "POLICY_FAILED",
      `a ${serverKind} server has no route to load new full weights (v${weights.version}); train with vLLM (prime-rl's server) or SGLang, or use trainer "none"`,
      { plugin: "openai", hook: "loadWeights" },
    );
  }
  // Per step, like the policy counters: the step line is the progress display, this is the debug log.
  env.log.debug(`updating weights in flight to v${weights.version} from ${path}`);
  await post("/pause", undefined, config.admin_timeout_ms, isTransient, {
    mode: "keep",
    clear_cache: "false",
  });
  try {
    await post("/update_weights", { weight_dir: path }, config.update_weights_timeout_ms, isTransient);
  } finally {
    await post("/resume", undefined, config.admin_timeout_ms, isTransient);
  }
  return undefined;
}

/**
 * The model name of LoRA weights `version`: `<lora_name>-v<version>` on stock vLLM, `lora_name` on prime-rl's
 * server (reloaded in place).
 * @example adapterName(config, "air-lora", 3) // "air-lora-v3"
 */
export function adapterName(
  config: OpenAIPolicyConfig,
  name: string,
  version: number,
  serverKind: ServerKind = "vllm",
): string {
  return loraRoutes(config, serverKind).naming === "versioned" ? `${name}-v${version}` : name;
}

/**
 * Stock vLLM: `POST /v1/unload_lora_adapter {"lora_name"}` (vLLM's `UnloadLoRAAdapterRequest`; SGLang:
 * `/unload_lora_adapter`); a 404 (not
 * loaded, e.g. the server restarted) is fine. Retried on transient errors.
 * @example await unloadAdapter(server, config, "air-lora-v2", env);
 */
export async function unloadAdapter(
  server: InferenceServer,
  config: OpenAIPolicyConfig,
  name: string,
  env: PolicyEnvironment,
  serverKind: ServerKind = "vllm",
): Promise<void> {
  const route = loraRoutes(config, serverKind).unload;
  try {
    await withRetries(() => server.admin(route, { lora_name: name }, config.admin_timeout_ms, env.signal), {
      retries: config.admin_max_attempts - 1,
      backoffMs: config.retry_backoff_ms,
      backoffMaxMs: config.retry_backoff_max_ms,
      signal: env.signal,
      retryable: isTransient,
    });
  } catch (error) {
    if (statusOf(error) === 404) return;
    env.log.warn(`unloading LoRA adapter ${name} on ${server.baseUrl}: ${errorMessage(error)}`);
  }
}
