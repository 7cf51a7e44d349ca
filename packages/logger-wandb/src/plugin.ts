import { randomBytes } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import { AirError, definePlugin, errorMessage, type LoggerPlugin, z } from "@air/core";
import { resolveApiKey } from "./auth.ts";
import { WandbClient } from "./client.ts";
import { OfflineSink } from "./offline.ts";
import { OnlineSink } from "./online.ts";
import { WandbRecorder } from "./recorder.ts";
import type { RunInfo, RunSink } from "./sink.ts";

export const DEFAULT_BASE_URL = "https://api.wandb.ai";

export const wandbLoggerConfig = z
  .object({
    project: z.string().min(1).default("air").describe("W&B project the run is logged to"),
    entity: z
      .string()
      .optional()
      .describe("W&B user or team; default: the API key's default entity (asked from W&B at start)"),
    name: z.string().optional().describe("run display name; default: the air run name"),
    tags: z.array(z.string()).default([]).describe("run tags"),
    mode: z
      .enum(["online", "offline", "disabled"])
      .default("online")
      .describe(
        "online: send to W&B (needs WANDB_API_KEY or a netrc entry); offline: write <run dir>/wandb/offline-run-*/ for `wandb sync`; disabled: nothing",
      ),
    base_url: z
      .string()
      .url()
      .optional()
      .describe(`W&B API server; default: $WANDB_BASE_URL, else ${DEFAULT_BASE_URL}`),
    run_id: z
      .string()
      .regex(/^[a-z0-9_-]+$/)
      .optional()
      .describe("W&B run id (path segment); default: 8 random characters"),
    dir: z
      .string()
      .default("wandb")
      .describe("offline mode: where offline-run-* directories go; relative to the run dir"),
    table_rows: z
      .number()
      .int()
      .min(0)
      .default(8)
      .describe(
        "rollouts logged per step in the `rollouts` table (step, task, messages, reward, advantage); 0: none",
      ),
    flush_ms: z
      .number()
      .int()
      .positive()
      .default(2000)
      .describe("online: send queued rows at most this often"),
    timeout_ms: z.number().int().positive().default(30_000).describe("online: bound on each HTTP request"),
    attempts: z
      .number()
      .int()
      .min(1)
      .default(5)
      .describe("online: tries per request on network errors and 5xx"),
    finish_timeout_ms: z
      .number()
      .int()
      .positive()
      .default(20_000)
      .describe(
        "online: bound on sending the last rows when the run ends (keep below orchestrator.timeouts.hook_ms)",
      ),
  })
  .strict();

export type WandbLoggerConfig = z.output<typeof wandbLoggerConfig>;

/** A W&B-style run id: 8 characters of [a-z0-9]. */
export function newRunId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return [...randomBytes(8)].map((b) => alphabet[b % alphabet.length]).join("");
}

/** The API server: the config's `base_url`, else `$WANDB_BASE_URL`, else W&B's. */
export function baseUrlOf(config: WandbLoggerConfig, env: Record<string, string | undefined>): string {
  return (config.base_url ?? env.WANDB_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
}

/**
 * The "wandb" logger: the run's metrics (named as prime-rl's W&B view names them where it has them), a rollouts
 * table per step, evaluation results and the resolved config, sent to W&B (online), written for `wandb sync`
 * (offline), or nothing (disabled). Online, a missing API key or a rejected one fails the run at its start.
 * @example
 * [[logger]]
 * plugin = "wandb"
 * project = "air-mlgym"
 * tags = ["grpo"]
 */
export const wandbLogger = definePlugin({
  name: "wandb",
  kind: "logger",
  description:
    "metrics, a rollouts table, eval results and the config to Weights & Biases (online or offline)",
  configSchema: wandbLoggerConfig,
  launch: {
    preflight(config) {
      if (config.mode !== "online")
        return [{ name: "wandb api key", status: "skip", message: `mode ${config.mode}` }];
      const baseUrl = baseUrlOf(config, process.env);
      const key = resolveApiKey(baseUrl, process.env);
      return [
        key
          ? { name: "wandb api key", status: "ok", message: `from ${key.source}` }
          : { name: "wandb api key", status: "fail", message: missingKeyMessage(baseUrl) },
      ];
    },
  },
  async create(config, ctx): Promise<LoggerPlugin> {
    if (config.mode === "disabled") return {};
    const info: RunInfo = {
      runId: config.run_id ?? newRunId(),
      entity: config.entity ?? "",
      project: config.project,
      displayName: config.name ?? ctx.runName,
      tags: config.tags,
      startTimeMs: Date.now(),
    };
    let sink: RunSink;
    if (config.mode === "offline") {
      sink = new OfflineSink(
        isAbsolute(config.dir) ? config.dir : resolve(ctx.runDir, config.dir),
        info,
        ctx.log,
      );
    } else {
      const baseUrl = baseUrlOf(config, process.env);
      const key = resolveApiKey(baseUrl, process.env);
      if (!key) throw new AirError("CONFIG_INVALID", missingKeyMessage(baseUrl), { plugin: "wandb" });
      const client = new WandbClient({
        baseUrl,
        apiKey: key.key,
        timeoutMs: config.timeout_ms,
        attempts: config.attempts,
        retryDelayMs: 1000,
      });
      sink = new OnlineSink(client, info, {
        flushMs: config.flush_ms,
        finishTimeoutMs: config.finish_timeout_ms,
        log: ctx.log,
      });
    }
    try {
      await sink.start();
    } catch (error) {
      throw new AirError("RUN_FAILED", `cannot start the W&B run (${config.mode}): ${errorMessage(error)}`, {
        plugin: "wandb",
        cause: error,
      });
    }
    ctx.log.info(`W&B run ${info.runId} (${config.mode}): ${sink.location}`);
    const recorder = new WandbRecorder(sink, { tableRows: config.table_rows, startTimeMs: info.startTimeMs });
    return { hooks: recorder.hooks, close: () => recorder.finish() };
  },
});

function missingKeyMessage(baseUrl: string): string {
  return (
    `no W&B API key for ${new URL(baseUrl).hostname}: set WANDB_API_KEY (or run \`wandb login\`, which writes ~/.netrc), ` +
    'or set mode = "offline" or "disabled" in the [[logger]] plugin = "wandb" section'
  );
}
