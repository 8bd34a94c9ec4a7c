// Chromium through playwright-core. What the tests look for on the page is shared with the
// Firefox tests in ./console-page.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { DESKTOP, screenshotPath } from "./console-page.js";

/** Debian's Chromium (`.ci/run` installs it); `CHROMIUM_PATH` overrides. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Quiet, offline, sandbox-free headless flags (tests run as root in CI). */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A headless Chromium with a fresh profile directory; `close()` removes it. */
export async function openBrowser(): Promise<{
  context: BrowserContext;
  close(): Promise<void>;
}> {
  const profile = mkdtempSync(join(tmpdir(), "console-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { ...DESKTOP },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a full-page screenshot as `test-output/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = screenshotPath(name);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Signs in through the page's form, as a person would (the token never enters a URL). */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(url);
  await page.fill('input[name="token"]', token);
  await page.press('input[name="token"]', "Enter");
}

/** The task ids of the rows on the page, top to bottom. */
export function rowIds(page: Page): Promise<string[]> {
  return page.$$eval("#tasks tbody tr", (rows) =>
    rows.map((r) => r.getAttribute("data-task-id") ?? ""),
  );
}
