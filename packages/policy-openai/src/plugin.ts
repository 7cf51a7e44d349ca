import { definePlugin } from "@air/core";
import { routeAdmin } from "./admin-route.ts";
import { baseUrls, openaiPolicyConfig } from "./config.ts";
import { OpenAIPolicy } from "./policy.ts";
import { probeServer } from "./probe.ts";
import { flattenStats, formatStats } from "./stats.ts";

/**
 * The `openai` policy plugin: any OpenAI-compatible server (vLLM, prime-rl's inference server, air's tiny
 * server). Its request/error counters join each step's metrics as `openai/<counter>` and are logged.
 * @example
 * # rl.toml
 * [policy]
 * plugin = "openai"
 * base_url = "http://127.0.0.1:8000/v1"
 * max_tokens = 1024
 */
export default definePlugin({
  name: "openai",
  kind: "policy",
  description: "OpenAI-compatible chat completions (vLLM): token ids, logprobs, command extraction",
  configSchema: openaiPolicyConfig,
  launch: {
    // With several servers the launcher checks (or starts) the first; the others are the user's.
    needs: (config) => ({ inferenceUrl: baseUrls(config)[0], weightUpdate: config.weight_update }),
    preflight: (config, ctx) => probeServer(config, ctx),
    routeAdmin,
  },
  create(config, ctx) {
    const policy = new OpenAIPolicy(config, {
      modelName: ctx.modelName,
      maxModelLen: ctx.maxModelLen,
      log: ctx.log,
      signal: ctx.signal,
      evaluationOnly: ctx.evaluation === true,
    });
    return Object.assign(policy, {
      // parser "none": the whole reply is the action, so no reply is a parse error.
      parses: config.parser !== "none",
      stepMetrics: () => {
        const window = policy.takeStats().window;
        // The step line is the progress display; the counters are step metrics and, per step, a debug line.
        ctx.log.debug(formatStats(window));
        return flattenStats(window);
      },
    });
  },
});
