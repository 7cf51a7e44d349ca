import { z } from "@air/core";

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
