import { join } from "node:path";
import { openStore } from "@air/logger-sqlite";
import { type BrowserContext, chromium } from "playwright-core";

/**
 * Bounds of the browser tests, generous as on a busy 2-core CI machine (where Chromium runs several times slower
 * than idle): Chromium's start and one page action (`page.setDefaultTimeout`); each test allows 300 s in all.
 */
export const BROWSER_START_MS = 120_000;
export const BROWSER_ACTION_MS = 60_000;

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
    timeout: BROWSER_START_MS,
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
