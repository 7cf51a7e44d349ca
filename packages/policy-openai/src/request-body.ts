import type { GenerateRequest, Message } from "@air/core";
import type { OpenAIPolicyConfig } from "./config.ts";
import { kindRequestFields, type ServerInfo } from "./kinds.ts";
import type { ChatBody } from "./server.ts";

/** What one chat request is made of besides the config. */
export interface BodyParts {
  info: ServerInfo;
  /** The model name requests carry now (the base model's, or the loaded adapter's as the server selects it). */
  model: string;
  /** The weights version (vLLM's prefix-cache salt). */
  version: number;
  messages: Message[];
  maxTokens: number;
  request: GenerateRequest;
  /** How many format re-asks came before (a re-ask gets its own seed). */
  formatRetry: number;
}

/**
 * The chat completion body: sampling from the config, the server kind's own fields (`kindRequestFields`), and a
 * per-request seed when the run has one.
 * @example const body = chatBody(config, { info, model, version, messages, maxTokens, request, formatRetry: 0 });
 */
export function chatBody(config: OpenAIPolicyConfig, p: BodyParts): ChatBody {
  const body: ChatBody = {
    model: p.model,
    messages: p.messages,
    temperature: config.temperature,
    top_p: config.top_p,
    max_completion_tokens: p.maxTokens,
    n: 1,
    ...kindRequestFields(p.info.kind, {
      returnTokenIds: config.return_token_ids,
      vllmExtras: config.vllm_extras,
      version: p.version,
    }),
  };
  if (config.seed !== undefined) {
    body.seed = requestSeed(config.seed, p.request.rolloutId, p.request.turnIndex, p.formatRetry);
  }
  return body;
}

/** A 31-bit seed from the run seed, rollout, turn and re-ask, so rollouts of one group still differ. */
function requestSeed(seed: number, rolloutId: string, turnIndex: number, formatRetry: number): number {
  let h = (seed ^ 0x811c9dc5) >>> 0;
  for (const ch of `${rolloutId}:${turnIndex}:${formatRetry}`) {
    h = Math.imul(h ^ (ch.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  }
  return h & 0x7fffffff;
}
