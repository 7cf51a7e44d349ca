import { z } from "zod";

/**
 * Config of the `sqlite` logger (a `[[logger]]` section).
 * @example sqliteLoggerConfig.parse({ path: "runs.db", flush_ms: 500 })
 */
export const sqliteLoggerConfig = z
  .object({
    path: z.string().default("air.db").describe("database file; relative paths are relative to the run dir"),
    flush_rows: z.number().int().positive().default(500).describe("flush once this many writes are queued"),
    flush_ms: z.number().int().positive().default(250).describe("flush at most this long after a write"),
    synchronous: z
      .enum(["NORMAL", "FULL"])
      .default("NORMAL")
      .describe("SQLite synchronous: NORMAL survives a killed process, FULL also a power cut"),
    heartbeat_ms: z
      .number()
      .int()
      .min(0)
      .default(5000)
      .describe(
        "write runs.heartbeat_at this often (0: never); the dashboard shows a silent running run as dead",
      ),
  })
  .strict();
export type SqliteLoggerConfig = z.output<typeof sqliteLoggerConfig>;
