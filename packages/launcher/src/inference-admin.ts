import { engineBaseUrl, inferenceBaseUrl } from "./commands.ts";
import { inferenceKind, processContext } from "./process-kinds.ts";
import type { RunConfig } from "./sections.ts";

/**
 * With a router in front of the engine the launcher starts (its process kind's `enginePort`; prime-rl's server
 * with `[inference] router = true`), the policy's admin calls must go past the router to the engine, as prime-rl's `rl` sets the
 * orchestrator's `admin_base_url`: the policy's `launch.routeAdmin` hook fills in its admin address (openai:
 * `[policy] admin_url`, one per `base_url`) and returns the problems, each naming its keys.
 * @example resolveAdminUrls(config) // [] and config.plugins.policy.config.admin_url === ["http://127.0.0.1:8100/v1"]
 */
export function resolveAdminUrls(config: RunConfig): string[] {
  const at = ` (${config.file})`;
  if (inferenceKind(config)?.enginePort?.(processContext(config, "inference")) === undefined) return [];
  const policy = config.plugins.policy;
  const hook = policy.definition.launch?.routeAdmin;
  if (!hook) return [];
  const server = { url: inferenceBaseUrl(config), engineUrl: engineBaseUrl(config) };
  return hook(policy.config, server).map((p) => `${p}${at}`);
}
