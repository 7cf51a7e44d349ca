import { INFO_ROUTES, kindFromInfoRoute, kindFromModels, type ServerInfo, type ServerKind } from "./kinds.ts";
import type { InferenceServer } from "./server.ts";

/**
 * Finds the server's kind and context window: `GET /v1/models` first (its `owned_by` and window fields), then
 * llama.cpp's `/props`, SGLang's `/get_model_info` and vLLM's `/version`; a server that answers none of them
 * is a hosted OpenAI-compatible API (`openai`). With `forced` the kind is not guessed, but the window is still
 * read. Throws when `/v1/models` cannot be reached at all (the server is down or broken).
 * @example const info = await detectServer(server, "auto", "tiny", signal); // { kind: "llama.cpp", contextWindow: 512, ... }
 */
export async function detectServer(
  server: InferenceServer,
  forced: ServerKind | "auto",
  model: string,
  signal: AbortSignal,
): Promise<ServerInfo> {
  const models = await server.getJson("/v1/models", signal);
  const fromModels = kindFromModels(models, model);
  const probes: ServerInfo[] = [];
  if (fromModels === undefined || (forced !== "auto" && fromModels.kind !== forced)) {
    for (const route of INFO_ROUTES) {
      try {
        const info = kindFromInfoRoute(route, await server.getJson(route, signal, 10_000));
        if (info !== undefined) probes.push(info);
      } catch {
        // the route does not exist on this server
      }
      if (probes.length > 0 && forced === "auto") break;
    }
  }
  const found = fromModels ?? probes[0];
  if (forced !== "auto") {
    const same = [fromModels, ...probes].find((i) => i?.kind === forced);
    const window = same?.contextWindow ?? found?.contextWindow;
    return {
      kind: forced,
      ...(window === undefined ? {} : { contextWindow: window }),
      evidence: `policy.server = "${forced}"${found && found.kind !== forced ? ` (the server looks like ${found.kind}: ${found.evidence})` : ""}`,
    };
  }
  return found ?? { kind: "openai", evidence: "no vLLM, SGLang or llama.cpp route answered" };
}
