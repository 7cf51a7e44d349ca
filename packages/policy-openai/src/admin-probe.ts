import type { CheckResult } from "@air/core";
import { HttpStatusError, statusOf } from "./retry.ts";
import type { InferenceServer } from "./server.ts";

/**
 * A directory no server has: `/update_weights` is sent prime-rl's payload with it, so a route that takes
 * `weight_dir` fails to load it (and serves the weights it had) while a route that wants another payload says so.
 */
export const PROBE_WEIGHT_DIR = "/nonexistent/air-rl-check/admin-route-probe";

/** Why an `/update_weights` answer shows a route that does not take prime-rl's `{"weight_dir"}`, or undefined. */
function updateMismatch(status: number, body: string): string | undefined {
  if (status === 404) return "is not served (404)";
  if (status === 405) return "does not take POST (405)";
  // FastAPI's validation error (a pydantic body without weight_dir), or vLLM's own route naming its field.
  if (status === 422 || /update_info/.test(body))
    return `answered ${status} to prime-rl's {"weight_dir"}: ${body.slice(0, 200)} — this is stock vLLM's own /update_weights (it expects "update_info"; mounted with VLLM_SERVER_DEV_MODE), not prime-rl's`;
  return undefined;
}

/**
 * `rl check` for full-weight updates: sends prime-rl's admin calls to the running server as its client does —
 * `POST /pause?mode=keep&clear_cache=false`, `POST /update_weights {"weight_dir"}` (with `PROBE_WEIGHT_DIR`, so
 * nothing is loaded), and always `POST /resume` — and names a route that is missing or expects another payload:
 * stock vLLM serves its own `/pause`, `/resume` and `/update_weights` (the latter wants `update_info` and answers
 * prime-rl's payload 400, or 422 where it is a pydantic body), so a run against it would fail every weight update.
 * An error about the missing directory is what prime-rl's route answers: ok.
 * @example const result = await probeAdminRoutes(policy.server, 20_000, signal, "admin routes");
 */
export async function probeAdminRoutes(
  server: InferenceServer,
  timeoutMs: number,
  signal: AbortSignal,
  name: string,
): Promise<CheckResult> {
  const where = server.rootUrl;
  const call = async (route: string, body?: unknown, query?: Record<string, string>) => {
    try {
      await server.admin(route, body, timeoutMs, signal, query);
      return undefined;
    } catch (error) {
      if (statusOf(error) === undefined) throw error;
      return error instanceof HttpStatusError ? error : new HttpStatusError(statusOf(error) ?? 0, route, "");
    }
  };
  const paused = await call("/pause", undefined, { mode: "keep", clear_cache: "false" });
  if (paused !== undefined)
    return {
      name,
      status: "fail",
      message: `${where}: POST /pause answered ${paused.status}: ${paused.body.slice(0, 200)} — the server lacks prime-rl's admin routes (full-weight updates need prime-rl's inference server; stock vLLM: weight_update = "lora")`,
    };
  let update: HttpStatusError | undefined;
  let failure: unknown;
  try {
    update = await call("/update_weights", { weight_dir: PROBE_WEIGHT_DIR });
  } catch (error) {
    failure = error;
  }
  const resumed = await call("/resume");
  if (failure !== undefined) throw failure;
  if (resumed !== undefined)
    return {
      name,
      status: "fail",
      message: `${where}: POST /resume answered ${resumed.status}: ${resumed.body.slice(0, 200)} (the server may stay paused)`,
    };
  const mismatch = update === undefined ? undefined : updateMismatch(update.status, update.body);
  if (mismatch !== undefined)
    return { name, status: "fail", message: `${where}: POST /update_weights ${mismatch}` };
  return {
    name,
    status: "ok",
    message: `${where}: /pause, /update_weights {"weight_dir"}, /resume answered as prime-rl's server${update ? ` (a missing weight_dir: ${update.status})` : ""}`,
  };
}
