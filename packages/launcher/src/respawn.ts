import { spawn } from "node:child_process";
import type { RunConfig } from "./sections.ts";

/** Bun's default limit on concurrent outgoing HTTP requests of one process. */
export const BUN_DEFAULT_HTTP_REQUESTS = 256;
const VAR = "BUN_CONFIG_MAX_HTTP_REQUESTS";
const RESPAWNED = "AIR_RL_RESPAWNED";

/**
 * Concurrent HTTP requests the orchestrator may need: one per rollout in flight, plus headroom for the
 * policy's admin routes and health checks.
 * @example httpRequestsNeeded(config) // 320 for max_concurrent_rollouts = 256
 */
export function httpRequestsNeeded(config: RunConfig): number {
  return config.root.orchestrator.max_concurrent_rollouts + 64;
}

/** The limit this process started with (Bun reads it once, at start-up). */
export function currentHttpRequestLimit(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env[VAR]);
  return Number.isInteger(value) && value > 0 ? value : BUN_DEFAULT_HTTP_REQUESTS;
}

/**
 * When the config needs more concurrent HTTP requests than this process allows, runs the same command again
 * in a child with BUN_CONFIG_MAX_HTTP_REQUESTS raised (Bun only reads it at start-up) and resolves with the
 * child's exit code; resolves undefined when no restart is needed. The child runs in its own process group
 * and SIGINT, SIGTERM and SIGHUP sent to this process (Ctrl-C included) are passed on once each.
 * @example const code = await respawnIfNeeded(config); if (code !== undefined) process.exit(code);
 */
export async function respawnIfNeeded(config: RunConfig): Promise<number | undefined> {
  const needed = httpRequestsNeeded(config);
  if (process.env[RESPAWNED] || currentHttpRequestLimit() >= needed) return undefined;
  process.stderr.write(`[launcher] restarting with ${VAR}=${needed} (max_concurrent_rollouts needs it)\n`);
  const child = spawn(process.execPath, process.argv.slice(1), {
    stdio: "inherit",
    detached: true,
    env: { ...process.env, [VAR]: String(needed), [RESPAWNED]: "1" },
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
  return new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 + 15 : 1)));
    child.on("error", (error) => {
      process.stderr.write(`[launcher] could not restart: ${error.message}\n`);
      resolve(1);
    });
  });
}
