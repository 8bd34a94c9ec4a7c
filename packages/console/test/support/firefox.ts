// Firefox through puppeteer-core over WebDriver BiDi: playwright-core drives only its own
// patched Firefox builds, while puppeteer-core drives a stock Firefox such as Debian's
// firefox-esr. What the tests look for on the page is shared with Chromium in ./console-page.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { DESKTOP, ROW_IDS, screenshotPath } from "./console-page.js";

/** Debian's Firefox ESR (`.ci/run` installs it); `FIREFOX_PATH` overrides. */
export const FIREFOX = process.env.FIREFOX_PATH ?? "/usr/bin/firefox-esr";

/**
 * A headless Firefox with a fresh profile directory (puppeteer writes its quiet, offline
 * testing preferences into it); `close()` removes it.
 */
export async function openFirefox(): Promise<{
  browser: Browser;
  /** A new tab at the desktop viewport. */
  newPage(): Promise<Page>;
  close(): Promise<void>;
}> {
  const profile = mkdtempSync(join(tmpdir(), "console-firefox-"));
  const browser = await puppeteer.launch({
    browser: "firefox",
    executablePath: FIREFOX,
    headless: true,
    userDataDir: profile,
    defaultViewport: { ...DESKTOP },
  });
  return {
    browser,
    newPage: () => browser.newPage(),
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a full-page screenshot as `test-output/firefox-<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = screenshotPath(`firefox-${name}`) as `${string}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Signs in through the page's form, as a person would (the token never enters a URL). */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(url);
  const input = await page.waitForSelector('input[name="token"]');
  await input!.type(token);
  await input!.press("Enter");
}

/** The task ids of the rows on the page, top to bottom. */
export function rowIds(page: Page): Promise<string[]> {
  return page.evaluate(ROW_IDS) as Promise<string[]>;
}

/** Waits until the element at `selector` shows `text` (Chromium's tests use `:has-text()`). */
export async function waitForText(page: Page, selector: string, text: string): Promise<void> {
  await page.waitForFunction(
    `document.querySelector(${JSON.stringify(selector)})?.textContent.includes(${JSON.stringify(text)})`,
  );
}

/** The text of the element at `selector`, or null when there is none. */
export function textOf(page: Page, selector: string): Promise<string | null> {
  return page.evaluate(
    `document.querySelector(${JSON.stringify(selector)})?.textContent ?? null`,
  ) as Promise<string | null>;
}

/**
 * The selector of the control labelled exactly `text` (through `<label for>`), so the tests
 * reach form controls by their labels as Chromium's `getByLabel` does; throws when none is.
 */
export async function labelled(page: Page, text: string): Promise<string> {
  const id = (await page.evaluate(
    `Array.from(document.querySelectorAll("label[for]")).find((l) => l.textContent === ${JSON.stringify(text)})?.htmlFor ?? null`,
  )) as string | null;
  if (!id) throw new Error(`No control labelled ${JSON.stringify(text)}`);
  return `[id=${JSON.stringify(id)}]`;
}

/** A DOM property (`checked`, `value`, …) of the element at `selector`. */
export function propertyOf(page: Page, selector: string, name: string): Promise<unknown> {
  return page.evaluate(
    `document.querySelector(${JSON.stringify(selector)})?.[${JSON.stringify(name)}]`,
  );
}
