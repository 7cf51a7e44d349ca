import { z } from "zod";

/**
 * Harbor's size strings of the deprecated `memory` / `storage` keys ("2G", "512M", "1024K") in MB, as Harbor
 * reads them (K is divided by 1024 and truncated).
 * @example sizeToMb("1.5G") // 1536
 */
export function sizeToMb(text: string): number {
  const s = text.trim().toUpperCase();
  const value = Number(s.slice(0, -1));
  const unit = s.at(-1);
  if (!Number.isFinite(value) || s.length < 2)
    throw new Error(`invalid size "${text}" (expected e.g. 1G, 512M)`);
  if (unit === "G") return Math.trunc(value * 1024);
  if (unit === "M") return Math.trunc(value);
  if (unit === "K") return Math.trunc(value / 1024);
  throw new Error(`invalid size "${text}" (expected e.g. 1G, 512M)`);
}

const user = z.union([z.string().min(1), z.number().int().min(0)]).optional();
const envVars = z.record(z.string(), z.string()).default({});

/**
 * One `task.toml`, with Harbor's field names and defaults (harbor `TaskConfig`, schema 1.x): `[verifier]`
 * timeout 600 s, `[agent]` no timeout, `[environment]` build timeout 600 s, 1 cpu, 2048 MB memory, 10240 MB
 * storage, internet allowed. Keys Harbor does not know are ignored, as Harbor ignores them; a known key of the
 * wrong type is an error. The deprecated `version`, `memory` and `storage` keys are read as Harbor reads them.
 * @example harborTaskConfigSchema.parse({ verifier: { timeout_sec: 60 } }).environment.memory_mb // 2048
 */
export const harborTaskConfigSchema = z
  .object({
    schema_version: z.string().optional(),
    version: z.string().optional(),
    task: z
      .object({
        name: z.string().min(1),
        description: z.string().default(""),
        keywords: z.array(z.string()).default([]),
      })
      .optional(),
    metadata: z.record(z.string(), z.unknown()).default({}),
    verifier: z
      .object({
        timeout_sec: z.number().positive().default(600),
        env: envVars,
        user,
      })
      .prefault({}),
    agent: z
      .object({
        timeout_sec: z.number().positive().optional(),
        user,
      })
      .prefault({}),
    environment: z
      .object({
        build_timeout_sec: z.number().positive().default(600),
        docker_image: z.string().min(1).optional(),
        cpus: z.number().positive().default(1),
        memory_mb: z.number().int().positive().default(2048),
        storage_mb: z.number().int().positive().default(10240),
        gpus: z.number().int().min(0).default(0),
        allow_internet: z.boolean().default(true),
        network_mode: z.enum(["public", "no-network", "allowlist"]).optional(),
        env: envVars,
        memory: z.string().optional(),
        storage: z.string().optional(),
      })
      .prefault({}),
    solution: z.object({ env: envVars }).prefault({}),
    source: z.string().optional(),
  })
  .transform((c, ctx) => {
    const environment = { ...c.environment };
    for (const key of ["memory", "storage"] as const) {
      const text = environment[key];
      if (text === undefined) continue;
      try {
        environment[`${key}_mb`] = sizeToMb(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", path: ["environment", key], message: (error as Error).message });
      }
    }
    const { memory: _m, storage: _s, ...rest } = environment;
    const { version, ...config } = c;
    return { ...config, schema_version: c.schema_version ?? version ?? "1.0", environment: rest };
  });

export type HarborTaskConfig = z.output<typeof harborTaskConfigSchema>;

/**
 * Whether the task's sandbox may reach the internet: `network_mode` when set ("allowlist" counts as no: air has
 * no per-host filter), else `allow_internet`.
 */
export function internetAllowed(config: HarborTaskConfig): boolean {
  const mode = config.environment.network_mode;
  return mode === undefined ? config.environment.allow_internet : mode === "public";
}
