import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { AirError, definePlugin, errorMessage, type LoggerPlugin } from "@air/core";
import { resolveApiKey } from "./auth.ts";
import { WandbClient } from "./client.ts";
import { OfflineSink } from "./offline.ts";
import { OnlineSink } from "./online.ts";
import { DEFAULT_BASE_URL, type WandbLoggerConfig, wandbLoggerConfig } from "./options.ts";
import { WandbRecorder } from "./recorder.ts";
import type { RunInfo, RunSink } from "./sink.ts";

/** A W&B-style run id: 8 characters of [a-z0-9]. */
export function newRunId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return [...randomBytes(8)].map((b) => alphabet[b % alphabet.length]).join("");
}

/** `<run dir>/wandb-run.json`: the W&B run id of this run dir, which `rl --resume` continues. */
export const RUN_ID_FILE = "wandb-run.json";

/** The W&B run id recorded in a run dir, or undefined. */
export function readStoredRunId(runDir: string): string | undefined {
  try {
    const value = JSON.parse(readFileSync(join(runDir, RUN_ID_FILE), "utf8")) as { runId?: unknown };
    return typeof value.runId === "string" && /^[a-z0-9]+$/i.test(value.runId) ? value.runId : undefined;
  } catch {
    return undefined;
  }
}

function writeStoredRunId(runDir: string, runId: string): void {
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, `${RUN_ID_FILE}.tmp`), `${JSON.stringify({ runId })}\n`);
  renameSync(join(runDir, `${RUN_ID_FILE}.tmp`), join(runDir, RUN_ID_FILE));
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
    // `rl --resume` continues the W&B run this run dir recorded (its id is kept in <run dir>/wandb-run.json).
    const stored = ctx.resume ? readStoredRunId(ctx.runDir) : undefined;
    const info: RunInfo = {
      runId: config.run_id ?? stored ?? newRunId(),
      resume: ctx.resume !== undefined && (stored !== undefined || config.run_id !== undefined),
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
    writeStoredRunId(ctx.runDir, info.runId);
    ctx.log.info(`W&B run ${info.runId} (${config.mode}${info.resume ? ", resumed" : ""}): ${sink.location}`);
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
