import { type CheckResult, createLogger, errorMessage, type LaunchContext } from "@air/core";
import { probeAdminRoutes } from "./admin-probe.ts";
import { baseUrls, type OpenAIPolicyConfig } from "./config.ts";
import { OpenAIPolicy } from "./policy.ts";
import { isTransient } from "./retry.ts";

const NAME = "policy server returns training data";
const ADMIN = "inference admin routes take prime-rl's payload";

/** The innermost cause of an error (AirError wraps the HTTP or connection error). */
function rootCause(error: unknown): unknown {
  let e = error;
  for (let i = 0; i < 5 && e instanceof Error && e.cause !== undefined; i++) e = e.cause;
  return e;
}

/**
 * `rl check` for the openai policy: one tiny generation (4 tokens) against each server of `base_url`, reporting
 * the server kind and whether the answer carries what training needs (prompt ids, completion ids, one logprob
 * each); one result per server, and for full weights on a vLLM-protocol server one more from `probeAdminRoutes`.
 * A transient failure (connection refused, 5xx, timeout) is `skip`: it may be a server the launcher has not started yet, or a hiccup; the run itself retries and, if it persists, fails. A
 * server that answers without the data training needs, or refuses the request (4xx), is `fail`.
 * @example const [result] = await probeServer(config, { configDir, runDir, inferenceUrl });
 */
export async function probeServer(
  config: OpenAIPolicyConfig,
  ctx: Pick<LaunchContext, "inferenceUrl" | "modelName">,
  timeoutMs = 20_000,
): Promise<CheckResult[]> {
  const urls = baseUrls(config);
  const results = await Promise.all(
    urls.map((url) =>
      probeOne(
        { ...config, base_url: url },
        url,
        urls.length > 1 ? `${NAME} (${url})` : NAME,
        ctx,
        timeoutMs,
      ),
    ),
  );
  return results.flat();
}

async function probeOne(
  config: OpenAIPolicyConfig,
  url: string,
  name: string,
  ctx: Pick<LaunchContext, "inferenceUrl" | "modelName">,
  timeoutMs: number,
): Promise<CheckResult[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const probeConfig: OpenAIPolicyConfig = {
    ...config,
    max_tokens: 4,
    max_retries: 0,
    max_format_retries: 0,
    parser: "none",
    request_timeout_ms: Math.min(config.request_timeout_ms, timeoutMs),
    require_token_data: true,
  };
  const log = createLogger("openai", () => {});
  // The name the run's requests carry (`[policy] model`, else `[model] name`): a server serving another answers 404.
  const modelName = config.model ?? ctx.modelName ?? "default";
  const policy = new OpenAIPolicy(probeConfig, { modelName, log, signal });
  try {
    const info = await policy.serverInfo(signal);
    const g = await policy.generate({
      messages: [{ role: "user", content: "Say ok." }],
      rolloutId: "check",
      turnIndex: 0,
      signal,
    });
    const masked = g.completionMask?.filter((m) => m === 0).length ?? 0;
    const without = masked > 0 ? ` (${masked} without one, masked out of the loss)` : "";
    const generated: CheckResult = {
      name,
      status: "ok",
      message: `${info.kind} (${info.evidence}): ${g.promptTokenIds.length} prompt ids, ${g.completionTokenIds.length} completion ids with logprobs${without}`,
    };
    // Full weights on a vLLM-protocol server go through prime-rl's admin routes: probe them with its payload.
    if (info.kind !== "vllm" || config.weight_update !== "full") return [generated];
    const adminName = name === NAME ? ADMIN : `${ADMIN} (${url})`;
    const admin = await probeAdminRoutes(policy.server, timeoutMs, signal, adminName).catch(
      (error: unknown): CheckResult => ({
        name: adminName,
        status: isTransient(rootCause(error)) ? "skip" : "fail",
        message: `${url}: ${errorMessage(error)}`,
      }),
    );
    return [generated, admin];
  } catch (error) {
    if (isTransient(rootCause(error))) {
      const ours = ctx.inferenceUrl !== undefined && sameServer(ctx.inferenceUrl, url);
      const why = ours ? "not up yet (the launcher starts it)" : "could not be checked";
      return [{ name, status: "skip", message: `${url} ${why}: ${errorMessage(error)}` }];
    }
    return [{ name, status: "fail", message: `${url}: ${errorMessage(error)}` }];
  }
}

/** Same host and port (the launcher's URL has no /v1; the policy's has). */
function sameServer(a: string, b: string): boolean {
  try {
    const [x, y] = [new URL(a), new URL(b)];
    return x.hostname === y.hostname && x.port === y.port && x.protocol === y.protocol;
  } catch {
    return false;
  }
}
