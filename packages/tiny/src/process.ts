import type { Subprocess } from "bun";
import type { TinyConfig } from "./config.ts";
import { tinyArgv } from "./scripts.ts";

/** A started tiny script and the JSON event it printed when ready. */
export interface TinyProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  ready: Record<string, unknown>;
  /** SIGTERM, then wait up to `timeoutMs`; SIGKILL if it has not exited. Resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | string>;
}

/**
 * Starts `script` (`<script> @ <toml>`, the TOML `writeTinyConfig` derived from `configFile`) and waits (up to `timeoutMs`) for its first stdout line, a JSON event
 * (`{"event": "listening", "port": ...}` for the server, `{"event": "ready", ...}` for the trainer). `extraEnv`:
 * e.g. what torchrun gives each rank (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
 * @example const server = await startTiny(TINY_SERVER_SCRIPT, "/run/tiny.json"); await server.stop();
 */
export async function startTiny(
  script: string,
  configFile: string,
  timeoutMs = 90_000,
  extraEnv: Record<string, string> = {},
): Promise<TinyProcess> {
  const config = (await Bun.file(configFile).json()) as TinyConfig;
  const env = { ...process.env, AIR_TINY_POLL_S: String(config.poll_ms / 1000), ...extraEnv };
  const proc = Bun.spawn(tinyArgv(script, configFile), {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env,
  });
  const stop = async (ms = 10_000) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode ?? String(proc.signalCode);
    proc.kill("SIGTERM");
    const result = await Promise.race([proc.exited, Bun.sleep(ms).then(() => "timeout" as const)]);
    if (result === "timeout") {
      proc.kill("SIGKILL");
      await proc.exited;
      return "timeout";
    }
    return result;
  };
  const reader = proc.stdout.getReader();
  let text = "";
  const readLine = async () => {
    for (;;) {
      const newline = text.indexOf("\n");
      if (newline >= 0) return text.slice(0, newline);
      const chunk = await reader.read();
      if (chunk.done) throw new Error(`${script} exited before it was ready`);
      text += new TextDecoder().decode(chunk.value);
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const line = await Promise.race([
      readLine(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${script}: not ready after ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    reader.releaseLock();
    void proc.stdout.pipeTo(new WritableStream()).catch(() => {});
    return { proc, ready: JSON.parse(line) as Record<string, unknown>, stop };
  } catch (error) {
    await stop(2_000);
    const stderr = await new Response(proc.stderr).text().catch(() => "");
    throw new Error(`${error instanceof Error ? error.message : error}\n${stderr}`);
  } finally {
    clearTimeout(timer);
  }
}
