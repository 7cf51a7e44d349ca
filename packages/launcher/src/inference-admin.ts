import { engineBaseUrl, inferenceBaseUrl } from "./commands.ts";
import type { RunConfig } from "./sections.ts";

function hostPort(url: string): string {
  try {
    const u = new URL(url);
    const host = u.hostname === "localhost" || u.hostname === "0.0.0.0" ? "127.0.0.1" : u.hostname;
    return `${host}:${u.port || (u.protocol === "https:" ? "443" : "80")}`;
  } catch {
    return url;
  }
}

const list = (v: unknown): string[] | undefined =>
  typeof v === "string" ? [v] : Array.isArray(v) ? v.map(String) : undefined;

/**
 * With prime-rl's router in front of the engine the launcher starts (`[inference] kind = "prime-rl"`, `router =
 * true`), the policy's admin calls must go past the router to the engine, as prime-rl's `rl` sets the
 * orchestrator's `admin_base_url` to `http://host:backend_port/v1`: fills in `[policy] admin_url` (one per
 * `base_url`: the engine for the launcher's server, each other server itself) and returns the problems, each
 * naming its keys (an explicit admin_url that disagrees names both). Mutates `config.plugins.policy.config`.
 * @example resolveAdminUrls(config) // [] and config.plugins.policy.config.admin_url === ["http://127.0.0.1:8100/v1"]
 */
export function resolveAdminUrls(config: RunConfig): string[] {
  const { inference } = config.root;
  const at = ` (${config.file})`;
  if (!inference.router) return [];
  if (inference.kind !== "prime-rl")
    return [
      `inference.router: only kind = "prime-rl" starts prime-rl's router (kind = "${inference.kind}")${at}`,
    ];
  const policy = config.plugins.policy;
  const settings = policy.config as Record<string, unknown>;
  const bases = list(settings.base_url);
  if (policy.definition.name !== "openai" || bases === undefined) return [];
  const ours = hostPort(inferenceBaseUrl(config));
  const engine = `${engineBaseUrl(config)}/v1`;
  const derived = bases.map((b) => (hostPort(b) === ours ? engine : b.replace(/\/+$/, "")));
  if (!bases.some((b) => hostPort(b) === ours)) return [];
  const given = list(settings.admin_url);
  if (given === undefined) {
    settings.admin_url = typeof settings.base_url === "string" ? derived[0] : derived;
    return [];
  }
  const wrong = given.findIndex((g, i) => hostPort(g) !== hostPort(derived[i] ?? ""));
  if (wrong >= 0 || given.length !== derived.length)
    return [
      `policy.admin_url = ${JSON.stringify(settings.admin_url)} contradicts ${JSON.stringify(derived)}: behind ` +
        `inference.router the admin calls go to the engine on inference.backend_port; remove policy.admin_url${at}`,
    ];
  return [];
}
