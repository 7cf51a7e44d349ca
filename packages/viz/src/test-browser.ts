import { join } from "node:path";
import { openStore } from "@air/logger-sqlite";
import { type BrowserContext, chromium } from "playwright-core";

/**
 * Debian's Chromium, headless, for the dashboard's browser tests (profile under `dir`; `--no-sandbox` as root).
 * @example const browser = await launchChromium(dir, { width: 1400, height: 1000 }); await browser.close();
 */
export function launchChromium(
  dir: string,
  viewport?: { width: number; height: number },
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(join(dir, "profile"), {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--headless"],
    ...(viewport ? { viewport } : {}),
    timeout: 30_000,
  });
}

/**
 * Runs `fn` on a writer of the store at `dbPath` (as the orchestrator's logger would write it), then closes it.
 * @example writeStore(dbPath, (db) => db.update(tables.runs).set({ status: "completed" }).run());
 */
export function writeStore(dbPath: string, fn: (db: ReturnType<typeof openStore>) => void): void {
  const writer = openStore(dbPath);
  try {
    fn(writer);
  } finally {
    writer.$client.close();
  }
}
