import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * The password of `host` in a netrc text (`machine <host> login <user> password <key>`), or undefined.
 * @example netrcPassword("machine api.wandb.ai login user password abc", "api.wandb.ai") // "abc"
 */
export function netrcPassword(text: string, host: string): string | undefined {
  const tokens = text
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join(" ")
    .split(/\s+/)
    .filter(Boolean);
  let current: string | undefined;
  let fallback: string | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token === "machine") current = tokens[++i];
    else if (token === "default") current = undefined;
    else if (token === "password") {
      const value = tokens[++i];
      if (current === host) return value;
      if (current === undefined) fallback ??= value;
    }
  }
  return fallback;
}

/** Where the key came from, for messages; never the key itself. */
export type KeySource = "WANDB_API_KEY" | "netrc";

/**
 * The W&B API key for `baseUrl`: `WANDB_API_KEY`, else the netrc entry of the URL's host (`$NETRC` or
 * `~/.netrc`), as the W&B SDKs look it up. Undefined when neither has one.
 * @example resolveApiKey("https://api.wandb.ai", process.env)
 */
export function resolveApiKey(
  baseUrl: string,
  env: Record<string, string | undefined>,
): { key: string; source: KeySource } | undefined {
  const fromEnv = env.WANDB_API_KEY?.trim();
  if (fromEnv) return { key: fromEnv, source: "WANDB_API_KEY" };
  const file = env.NETRC ?? join(env.HOME ?? homedir(), ".netrc");
  if (!existsSync(file)) return undefined;
  const host = new URL(baseUrl).hostname;
  const key = netrcPassword(readFileSync(file, "utf8"), host);
  return key ? { key, source: "netrc" } : undefined;
}
