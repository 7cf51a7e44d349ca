import { join } from "node:path";
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
