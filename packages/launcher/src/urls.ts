import type { RunConfig } from "./sections.ts";

/** Host a client uses to reach a server bound to `host`. */
export function clientHost(host: string): string {
  return host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host;
}

/**
 * The server's base URL and the one (no `/v1`) where the admin routes (`/pause`, `/update_weights`, LoRA loads)
 * reach the engine the launcher starts: behind a router (the process kind's `enginePort`, given) the engine's own
 * port, else the server itself.
 * @example serverUrls(config, 8100) // { inference: "http://127.0.0.1:8000", engine: "http://127.0.0.1:8100" }
 */
export function serverUrls(
  config: RunConfig,
  enginePort: number | undefined,
): { inference: string; engine: string } {
  const inference = inferenceBaseUrl(config);
  const host = clientHost(config.root.inference.host);
  return { inference, engine: enginePort === undefined ? inference : `http://${host}:${enginePort}` };
}

/** Base URL of the inference server (no trailing slash, no `/v1`). */
export function inferenceBaseUrl(config: RunConfig): string {
  const { inference } = config.root;
  if (inference.kind === "external") return (inference.url ?? "").replace(/\/+$/, "").replace(/\/v1$/, "");
  return `http://${clientHost(inference.host)}:${inference.port}`;
}
