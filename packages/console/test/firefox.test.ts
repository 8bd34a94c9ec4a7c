// The console in Firefox: Debian's firefox-esr, headless, driven by puppeteer-core over
// WebDriver BiDi, against the same real node:http server, TaskService, TaskRunner and memory
// store as the Chromium tests (browser.test.ts), checking the main scenarios the same way.
// Each test saves a screenshot under test-output/ (named firefox-*).
import type { Page } from "puppeteer-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  COUNT_LOADS,
  OVERFLOWS_HORIZONTALLY,
  PHONE,
  row,
  STORED_TOKEN,
} from "./support/console-page.js";
import {
  labelled,
  openFirefox,
  propertyOf,
  rowIds,
  screenshot,
  signIn,
  textOf,
  waitForText,
} from "./support/firefox.js";
import { ALICE, BOB, type ConsoleFixture, startConsole } from "./support/server.js";

let firefox: Awaited<ReturnType<typeof openFirefox>>;
let f: ConsoleFixture;
let page: Page;

beforeAll(async () => {
  firefox = await openFirefox();
}, 60_000);

afterAll(async () => {
  await firefox?.close();
});

beforeEach(async () => {
  f = await startConsole();
  page = await firefox.newPage();
  // Count page loads: a live update must not reload the page.
  await page.evaluateOnNewDocument(COUNT_LOADS);
});

afterEach(async () => {
  await page?.close();
  await f?.close();
});

/** Clicks the element at `selector` once it is on the page. */
async function click(selector: string): Promise<void> {
  const element = await page.waitForSelector(selector);
  await element!.click();
}

describe("console in Firefox", () => {
  it("alice signs in and sees her 3 tasks and none of bob's, also on a phone", async () => {
    const mine = [];
    for (const gate of ["a1", "a2", "a3"]) {
      mine.push((await f.start(ALICE, "gated_job", { gate })).taskId);
    }
    const bobs = (await f.start(BOB, "gated_job", { gate: "b1" })).taskId;
    await signIn(page, f.url, "alice-token");
    await page.waitForSelector(row(mine[0]!));
    expect(await rowIds(page)).toEqual([...mine].reverse());
    expect(await page.$(row(bobs))).toBeNull();
    expect(await textOf(page, "#who")).toBe("Signed in as alice@acme");
    // The token is kept in session storage and never put in a URL.
    expect(page.url()).not.toContain("alice-token");
    expect(await page.evaluate(STORED_TOKEN)).toBe("alice-token");
    expect(await page.evaluate(OVERFLOWS_HORIZONTALLY)).toBe(false);
    await screenshot(page, "alice-list");
    await page.setViewport({ ...PHONE });
    // Readable on a phone: no horizontal scrolling, for the list and for a task's detail.
    expect(await page.evaluate(OVERFLOWS_HORIZONTALLY)).toBe(false);
    await screenshot(page, "alice-list-phone");
    await click(`${row(mine[0]!)} td.id button`);
    await page.waitForSelector(`#detail[data-task-id="${mine[0]}"]`);
    expect(await page.evaluate(OVERFLOWS_HORIZONTALLY)).toBe(false);
    await screenshot(page, "alice-detail-phone");
  });

  it("a running task turns completed on the page without a reload", async () => {
    const t = await f.start(ALICE, "gated_job", { gate: "go" });
    await signIn(page, f.url, "alice-token");
    await page.waitForSelector(row(t.taskId, "working"));
    await waitForText(page, "#live", "Live");
    f.gates.open("go");
    await page.waitForSelector(row(t.taskId, "completed"));
    expect(await textOf(page, `${row(t.taskId)} td.status`)).toBe("completed");
    expect(await page.evaluate("window.loads")).toBe(1);
    // A task created after the page loaded appears at the top, also without a reload.
    const late = await f.start(ALICE, "gated_job", { gate: "late" });
    await page.waitForSelector(row(late.taskId));
    expect((await rowIds(page))[0]).toBe(late.taskId);
    expect(await page.evaluate("window.loads")).toBe(1);
    await screenshot(page, "live-completed");
  });

  it("cancel from the page ends the task", async () => {
    const t = await f.start(ALICE, "gated_job", { gate: "never" });
    await signIn(page, f.url, "alice-token");
    await click(`${row(t.taskId)} td.id button`);
    await page.waitForSelector(`#detail[data-task-id="${t.taskId}"]`);
    await click("#cancel-task");
    await page.waitForSelector(row(t.taskId, "cancelled"));
    await page.waitForSelector(`#detail[data-status="cancelled"]`);
    expect((await f.service.get(ALICE, t.taskId)).status).toBe("cancelled");
    await screenshot(page, "cancelled");
  });

  it("answering confirm_delete's input from the page completes it", async () => {
    const t = await f.start(ALICE, "confirm_delete", { filename: "notes.txt" });
    await f.service.waitFor(ALICE, t.taskId, (r) => r.status === "input_required");
    await signIn(page, f.url, "alice-token");
    await click(`${row(t.taskId, "input_required")} td.id button`);
    const form = 'form[data-input-key="confirm"]';
    await page.waitForSelector(form);
    expect(await textOf(page, `${form} legend`)).toBe("Delete notes.txt?");
    // Labelled controls: reach them by their labels, and use the keyboard.
    const confirm = await labelled(page, "Yes, delete it");
    const copies = await labelled(page, "Copies to keep");
    await click(confirm);
    await page.select(await labelled(page, "Mode (required)"), "shred");
    await page.type(copies, "2");
    await screenshot(page, "input-form");
    // A live update of the open task re-renders it; what was typed survives.
    await f.service.setStatusMessage(ALICE, t.taskId, "Still waiting");
    await waitForText(page, "#detail", "Still waiting");
    expect(await propertyOf(page, confirm, "checked")).toBe(true);
    expect(await propertyOf(page, copies, "value")).toBe("2");
    await page.focus(copies);
    await page.keyboard.press("Enter");
    await page.waitForSelector(row(t.taskId, "completed"));
    const done = await f.service.get(ALICE, t.taskId);
    expect(done.outcome).toEqual({
      kind: "result",
      result: { content: [{ type: "text", text: "Deleted notes.txt (shred)" }] },
    });
    await page.waitForSelector(`#detail[data-status="completed"]`);
    await screenshot(page, "input-answered");
  });

  it("a bad token shows the message", async () => {
    await signIn(page, f.url, "wrong-token");
    await waitForText(page, "#sign-in-error", "not accepted");
    const app = await page.$("#app");
    expect((await app?.isVisible()) ?? false).toBe(false);
    expect(await page.evaluate(STORED_TOKEN)).toBeNull();
    await screenshot(page, "bad-token");
  });
});
