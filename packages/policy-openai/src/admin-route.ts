import type { OpenAIPolicyConfig } from "./config.ts";

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
 * The policy's `launch.routeAdmin` hook: with a router in front of the engine the launcher starts, `admin_url`
 * (one per `base_url`) points the launcher's server at its engine and leaves every other server itself; an
 * explicit admin_url that disagrees is a problem naming both keys. Mutates `config.admin_url`.
 * @example routeAdmin(config, { url: "http://127.0.0.1:8000", engineUrl: "http://127.0.0.1:8100" }) // []
 */
export function routeAdmin(config: OpenAIPolicyConfig, server: { url: string; engineUrl: string }): string[] {
  const bases = list(config.base_url);
  if (bases === undefined) return [];
  const ours = hostPort(server.url);
  if (!bases.some((b) => hostPort(b) === ours)) return [];
  const engine = `${server.engineUrl}/v1`;
  const derived = bases.map((b) => (hostPort(b) === ours ? engine : b.replace(/\/+$/, "")));
  const given = list(config.admin_url);
  if (given === undefined) {
    config.admin_url = typeof config.base_url === "string" ? derived[0] : derived;
    return [];
  }
  const wrong = given.findIndex((g, i) => hostPort(g) !== hostPort(derived[i] ?? ""));
  if (wrong >= 0 || given.length !== derived.length)
    return [
      `policy.admin_url = ${JSON.stringify(config.admin_url)} contradicts ${JSON.stringify(derived)}: behind ` +
        "inference.router the admin calls go to the engine on inference.backend_port; remove policy.admin_url",
    ];
  return [];
}
