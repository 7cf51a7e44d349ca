import { existsSync } from "node:fs";
import { AirError, sleep } from "@air/core";

export interface WaitOptions {
  pollMs: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Label for the timeout message. */
  what?: string;
  /** Called before each poll; throw from it to stop waiting (e.g. the trainer reported a failure). */
  check?: () => void;
}

/**
 * Polls until `path` exists, like prime-rl's `wait_for_path`, with a timeout and an abort signal.
 * @example await waitForFile("/out/run_default/broadcasts/step_1/STABLE", { pollMs: 200, timeoutMs: 60_000 });
 */
export async function waitForFile(path: string, options: WaitOptions): Promise<void> {
  await waitFor(() => (existsSync(path) ? path : undefined), { what: path, ...options });
}

/**
 * Polls `find` until it returns a value (e.g. the first of several places where a step's weights are finished),
 * with a timeout and an abort signal; resolves with that value.
 * @example await waitFor(() => finishedWeightsDir(runDir, 4), { pollMs: 200, timeoutMs: 60_000, what: "step 4" })
 */
export async function waitFor<T>(find: () => T | undefined, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    options.check?.();
    const found = find();
    if (found !== undefined) return found;
    if (options.signal?.aborted) throw new AirError("ABORTED", `aborted while waiting for ${options.what}`);
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new AirError("TIMEOUT", `${options.what}: not there after ${options.timeoutMs} ms`);
    }
    await sleep(Math.min(options.pollMs, left), options.signal);
  }
}
